"""Retail records: products with variants (items), users with payment methods, orders.

Field names, types and order follow the tau2 retail `db.json` schema: tool outputs are these models
dumped to JSON, and the DB fingerprint hashes their dump. Only the database root forbids unknown
fields (as in tau2).
"""

from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]
CancelReason = Literal["no longer needed", "ordered by mistake"]
TransactionType = Literal["payment", "refund"]


class Variant(BaseModel):
    """One purchasable item of a product: a fixed combination of options."""

    item_id: str = Field(description="Item id, e.g. '1008292230'")
    options: dict[str, str] = Field(description="Option values, e.g. {'color': 'blue', 'size': 'L'}")
    available: bool = Field(description="Whether the item is in stock")
    price: float = Field(description="Unit price in dollars")


class Product(BaseModel):
    """A product type and all its items."""

    name: str = Field(description="Product name, e.g. 'T-Shirt'")
    product_id: str = Field(description="Product id, e.g. '6086499569' (differs from item ids)")
    variants: dict[str, Variant] = Field(description="Items of this product by item id")


class UserName(BaseModel):
    """A customer's name."""

    first_name: str = Field(description="Given name")
    last_name: str = Field(description="Family name")


class UserAddress(BaseModel):
    """A postal address."""

    address1: str = Field(description="Street line")
    address2: str = Field(description="Second address line (may be empty)")
    city: str = Field(description="City")
    country: str = Field(description="Country")
    state: str = Field(description="State or province")
    zip: str = Field(description="Postal code")


class PaymentMethodBase(BaseModel):
    """Fields shared by every saved payment method."""

    source: str = Field(description="Kind of payment method")
    id: str = Field(description="Payment method id")


class CreditCard(PaymentMethodBase):
    """A saved credit card."""

    source: Literal["credit_card"] = Field(description="Always 'credit_card'")
    brand: str = Field(description="Card network, e.g. 'visa'")
    last_four: str = Field(description="Last four digits of the card number")


class Paypal(PaymentMethodBase):
    """A linked PayPal account."""

    source: Literal["paypal"] = Field(description="Always 'paypal'")


class GiftCard(PaymentMethodBase):
    """A gift card with a balance."""

    source: Literal["gift_card"] = Field(description="Always 'gift_card'")
    balance: float = Field(description="Remaining balance in dollars")
    id: str = Field(description="Payment method id")


PaymentMethod = Union[CreditCard, GiftCard, Paypal]


class User(BaseModel):
    """A customer profile."""

    user_id: str = Field(description="User id, e.g. 'sara_doe_496'")
    name: UserName = Field(description="Customer's name")
    address: UserAddress = Field(description="Default shipping address")
    email: str = Field(description="Email address")
    payment_methods: dict[str, PaymentMethod] = Field(description="Saved payment methods by id")
    orders: list[str] = Field(description="Ids of the user's orders")


class OrderFullfilment(BaseModel):
    """A shipment of some of an order's items."""

    tracking_id: list[str] = Field(description="Carrier tracking numbers")
    item_ids: list[str] = Field(description="Item ids in this shipment")


class OrderItem(BaseModel):
    """One item line of an order."""

    name: str = Field(description="Product name")
    product_id: str = Field(description="Product id")
    item_id: str = Field(description="Item id")
    price: float = Field(description="Price paid, in dollars")
    options: dict[str, str] = Field(description="Option values of the item")


class OrderPayment(BaseModel):
    """A payment or refund on an order."""

    transaction_type: TransactionType = Field(description="'payment' or 'refund'")
    amount: float = Field(description="Amount in dollars")
    payment_method_id: str = Field(description="Payment method used")


class Order(BaseModel):
    """An order with its items, shipments, payments and any requested change."""

    order_id: str = Field(description="Order id, with a leading '#', e.g. '#W0000000'")
    user_id: str = Field(description="Owner's user id")
    address: UserAddress = Field(description="Shipping address")
    items: list[OrderItem] = Field(description="Ordered items")
    status: OrderStatus = Field(description="Order status")
    fulfillments: list[OrderFullfilment] = Field(description="Shipments")
    payment_history: list[OrderPayment] = Field(description="Payments and refunds, oldest first")
    cancel_reason: Optional[CancelReason] = Field(None, description="Why the order was cancelled")
    exchange_items: Optional[list[str]] = Field(None, description="Item ids to be exchanged")
    exchange_new_items: Optional[list[str]] = Field(None, description="Item ids they are exchanged for")
    exchange_payment_method_id: Optional[str] = Field(None, description="Payment method for the exchange")
    exchange_price_difference: Optional[float] = Field(None, description="Price difference of the exchange")
    return_items: Optional[list[str]] = Field(None, description="Item ids to be returned")
    return_payment_method_id: Optional[str] = Field(None, description="Payment method receiving the refund")


class RetailDB(BaseModel):
    """The retail database: products, users and orders, each keyed by id."""

    model_config = ConfigDict(extra="forbid")

    products: dict[str, Product] = Field(description="Products by product id")
    users: dict[str, User] = Field(description="Users by user id")
    orders: dict[str, Order] = Field(description="Orders by order id")
