"""The retail tools (15 in the v0 task set, 16 in v1) with tau2's exact behaviour.

Checks run in the reference's order, with its error texts and its DB effects, including two of its
quirks that the gold answers depend on: a pending-order item change gives every changed line the
price and options of the *last* new item, and gift-card balances are rounded to cents after each
update. The class and method names matter: a missing or unexpected argument is reported with
Python's own message, which names `RetailTools.<tool>()`.
"""

from __future__ import annotations

import json
from typing import TypeGuard, get_args

from benchmarks.taubench.arithmetic import calculate_expression
from benchmarks.taubench.domain_tools import DomainTools, tool
from benchmarks.taubench.domains.retail.data_model import (
    CancelReason,
    GiftCard,
    Order,
    OrderItem,
    OrderPayment,
    PaymentMethod,
    Product,
    RetailDB,
    User,
    UserAddress,
    Variant,
)

CANCEL_REASONS: frozenset[str] = frozenset(get_args(CancelReason))


def _is_cancel_reason(reason: str) -> TypeGuard[CancelReason]:
    return reason in CANCEL_REASONS


class RetailTools(DomainTools):
    """The retail customer-service tools over a `RetailDB`."""

    db: RetailDB

    # --- lookups -----------------------------------------------------------------------------

    def _order(self, order_id: str) -> Order:
        if order_id not in self.db.orders:
            raise ValueError("Order not found")
        return self.db.orders[order_id]

    def _user(self, user_id: str) -> User:
        if user_id not in self.db.users:
            raise ValueError("User not found")
        return self.db.users[user_id]

    def _product(self, product_id: str) -> Product:
        if product_id not in self.db.products:
            raise ValueError("Product not found")
        return self.db.products[product_id]

    def _variant(self, product_id: str, item_id: str) -> Variant:
        product = self._product(product_id)
        if item_id not in product.variants:
            raise ValueError("Variant not found")
        return product.variants[item_id]

    def _payment_method(self, user_id: str, payment_method_id: str) -> PaymentMethod:
        user = self._user(user_id)
        if payment_method_id not in user.payment_methods:
            raise ValueError("Payment method not found")
        return user.payment_methods[payment_method_id]

    @staticmethod
    def _first_line(order: Order, item_id: str) -> OrderItem | None:
        return next((line for line in order.items if line.item_id == item_id), None)

    @staticmethod
    def _check_items_in_order(order: Order, item_ids: list[str], message: str) -> None:
        """Every id must occur in `item_ids` at most as often as in the order; `{}` is the id."""
        in_order = [line.item_id for line in order.items]
        for item_id in item_ids:
            if item_ids.count(item_id) > in_order.count(item_id):
                raise ValueError(message.format(item_id))

    # --- tools -------------------------------------------------------------------------------

    @tool("generic")
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression and round the result to two decimals.

        Args:
            expression: Numbers combined with +, -, *, / and parentheses, e.g. '(54.04 + 12) * 2'.

        Returns:
            The result as text, e.g. '132.08'.

        Raises:
            ValueError: If the expression has other characters or cannot be evaluated.
        """
        return calculate_expression(expression)

    @tool("write")
    def cancel_pending_order(self, order_id: str, reason: str) -> Order:
        """Cancel an order that is still pending and refund its payments.

        Orders already processed or delivered cannot be cancelled. Explain the details and get an
        explicit yes from the customer first. Refunds to a gift card are credited at once; refunds
        to other methods take 5-7 business days.

        Args:
            order_id: Id of the order, with its leading '#', e.g. '#W0000000'.
            reason: Either 'no longer needed' or 'ordered by mistake'.

        Returns:
            The order after cancellation.

        Raises:
            ValueError: If the order does not exist, is not pending, or the reason is not allowed.
        """
        order = self._order(order_id)
        if order.status != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        if not _is_cancel_reason(reason):
            raise ValueError("Invalid reason")
        refunds = []
        for payment in order.payment_history:
            refunds.append(
                OrderPayment(
                    transaction_type="refund",
                    amount=payment.amount,
                    payment_method_id=payment.payment_method_id,
                )
            )
            user = self._user(order.user_id)
            method = self._payment_method(user.user_id, payment.payment_method_id)
            if isinstance(method, GiftCard):
                method.balance += payment.amount
                method.balance = round(method.balance, 2)
        order.status = "cancelled"
        order.cancel_reason = reason
        order.payment_history.extend(refunds)
        return order

    @tool("write")
    def exchange_delivered_order_items(
        self,
        order_id: str,
        item_ids: list[str],
        new_item_ids: list[str],
        payment_method_id: str,
    ) -> Order:
        """Request an exchange of delivered items for other items of the same products.

        A delivered order can be returned or exchanged only once. Explain the details and get an
        explicit yes from the customer first. The price difference is charged to, or refunded to,
        the given payment method.

        Args:
            order_id: Id of the order, with its leading '#', e.g. '#W0000000'.
            item_ids: Item ids to exchange, e.g. ['1008292230']; repeat an id to exchange several units.
            new_item_ids: Replacement item ids, position by position: each must be an available item
                of the same product as the item at the same position in item_ids.
            payment_method_id: Saved payment method for the price difference, e.g. 'gift_card_0000000'
                or 'credit_card_0000000' (see the user's or the order's details).

        Returns:
            The order with the exchange requested.

        Raises:
            ValueError: If the order does not exist or is not delivered, items are missing or
                unavailable, the two lists differ in length, or a gift card cannot cover the difference.
        """
        order = self._order(order_id)
        if order.status != "delivered":
            raise ValueError("Non-delivered order cannot be exchanged")
        self._check_items_in_order(order, item_ids, "Number of {} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match.")
        difference = 0.0
        for item_id, new_item_id in zip(item_ids, new_item_ids):
            line = self._first_line(order, item_id)
            if line is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._variant(line.product_id, new_item_id)
            if not variant.available:
                raise ValueError(f"New item {new_item_id} not found or available")
            difference += variant.price - line.price
        difference = round(difference, 2)
        method = self._payment_method(order.user_id, payment_method_id)
        if isinstance(method, GiftCard) and method.balance < difference:
            raise ValueError("Insufficient gift card balance to pay for the price difference")
        order.status = "exchange requested"
        order.exchange_items = sorted(item_ids)
        order.exchange_new_items = sorted(new_item_ids)
        order.exchange_payment_method_id = payment_method_id
        order.exchange_price_difference = difference
        return order

    @tool("read")
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find a customer's user id from their name and zip code.

        Prefer the email lookup; use this one when the customer cannot give an email address or it
        was not found. Names are compared case-insensitively.

        Args:
            first_name: Customer's first name, e.g. 'John'.
            last_name: Customer's last name, e.g. 'Doe'.
            zip: Zip code of the customer's address, e.g. '12345'.

        Returns:
            The user id.

        Raises:
            ValueError: If no customer matches.
        """
        for user_id, user in self.db.users.items():
            if (
                user.name.first_name.lower() == first_name.lower()
                and user.name.last_name.lower() == last_name.lower()
                and user.address.zip == zip
            ):
                return user_id
        raise ValueError("User not found")

    @tool("read")
    def find_user_id_by_email(self, email: str) -> str:
        """Find a customer's user id from their email address (case-insensitive).

        Args:
            email: Email address, e.g. 'john.doe@example.com'.

        Returns:
            The user id.

        Raises:
            ValueError: If no customer has that email.
        """
        for user_id, user in self.db.users.items():
            if user.email.lower() == email.lower():
                return user_id
        raise ValueError("User not found")

    @tool("read")
    def get_order_details(self, order_id: str) -> Order:
        """Look up an order: status, items, shipments, payments and any requested change.

        Args:
            order_id: Id of the order, with its leading '#', e.g. '#W0000000'.

        Returns:
            The order.

        Raises:
            ValueError: If the order does not exist.
        """
        return self._order(order_id)

    @tool("read")
    def get_product_details(self, product_id: str) -> Product:
        """Look up a product and all its items with options, availability and price.

        Args:
            product_id: Product id, e.g. '6086499569' (not an item id).

        Returns:
            The product.

        Raises:
            ValueError: If the product does not exist.
        """
        return self._product(product_id)

    @tool("read", task_sets=("v1",))
    def get_item_details(self, item_id: str) -> Variant:
        """Look up a single item: its options, availability and price.

        Args:
            item_id: Item id, e.g. '1008292230' (not a product id).

        Returns:
            The item.

        Raises:
            ValueError: If no product has that item.
        """
        for product in self.db.products.values():
            if item_id in product.variants:
                return product.variants[item_id]
        raise ValueError("Item not found")

    @tool("read")
    def get_user_details(self, user_id: str) -> User:
        """Look up a customer's profile: address, email, saved payment methods and order ids.

        Args:
            user_id: User id, e.g. 'sara_doe_496'.

        Returns:
            The user profile.

        Raises:
            ValueError: If the user does not exist.
        """
        return self._user(user_id)

    @tool("read")
    def list_all_product_types(self) -> str:
        """List every product type the store sells (50 in all) with its product id.

        Each product has several items that differ in their options.

        Returns:
            A JSON object text mapping product names to product ids, sorted by name.
        """
        names = {product.name: product.product_id for product in self.db.products.values()}
        return json.dumps(names, sort_keys=True)

    @tool("write")
    def modify_pending_order_address(
        self,
        order_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> Order:
        """Change the shipping address of a pending order.

        Explain the change and get an explicit yes from the customer first.

        Args:
            order_id: Id of the order, with its leading '#', e.g. '#W0000000'.
            address1: Street line, e.g. '123 Main St'.
            address2: Second line, e.g. 'Apt 1', or an empty string.
            city: City, e.g. 'San Francisco'.
            state: State, e.g. 'CA'.
            country: Country, e.g. 'USA'.
            zip: Zip code, e.g. '12345'.

        Returns:
            The order with its new address.

        Raises:
            ValueError: If the order does not exist or is not pending.
        """
        order = self._order(order_id)
        if "pending" not in order.status:
            raise ValueError("Non-pending order cannot be modified")
        order.address = UserAddress(
            address1=address1,
            address2=address2,
            city=city,
            state=state,
            country=country,
            zip=zip,
        )
        return order

    @tool("write")
    def modify_pending_order_items(
        self,
        order_id: str,
        item_ids: list[str],
        new_item_ids: list[str],
        payment_method_id: str,
    ) -> Order:
        """Swap items of a pending order for other items of the same products.

        This can be done only once per order. Explain the details and get an explicit yes from the
        customer first. The price difference is charged to, or refunded to, the given payment method.

        Args:
            order_id: Id of the order, with its leading '#', e.g. '#W0000000'.
            item_ids: Item ids to change, e.g. ['1008292230']; repeat an id to change several units.
            new_item_ids: Replacement item ids, position by position: each must be a different,
                available item of the same product as the item at the same position in item_ids.
            payment_method_id: Saved payment method for the price difference, e.g. 'gift_card_0000000'
                or 'credit_card_0000000' (see the user's or the order's details).

        Returns:
            The order after the change.

        Raises:
            ValueError: If the order does not exist or is not pending, items are missing, unchanged
                or unavailable, the lists differ in length, or a gift card cannot cover the difference.
        """
        order = self._order(order_id)
        if order.status != "pending":
            raise ValueError("Non-pending order cannot be modified")
        self._check_items_in_order(order, item_ids, "{} not found")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match")
        difference = 0.0
        variant: Variant
        for item_id, new_item_id in zip(item_ids, new_item_ids):
            if item_id == new_item_id:
                raise ValueError("The new item id should be different from the old item id")
            line = self._first_line(order, item_id)
            if line is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._variant(line.product_id, new_item_id)
            if not variant.available:
                raise ValueError(f"New item {new_item_id} not found or available")
            difference += variant.price - line.price
        method = self._payment_method(order.user_id, payment_method_id)
        if isinstance(method, GiftCard) and method.balance < difference:
            raise ValueError("Insufficient gift card balance to pay for the new item")
        order.payment_history.append(
            OrderPayment(
                transaction_type="payment" if difference > 0 else "refund",
                amount=abs(difference),
                payment_method_id=payment_method_id,
            )
        )
        if isinstance(method, GiftCard):
            method.balance -= difference
            method.balance = round(method.balance, 2)
        for item_id, new_item_id in zip(item_ids, new_item_ids):
            line = self._first_line(order, item_id)
            if line is None:
                raise ValueError(f"Item {item_id} not found")
            line.item_id = new_item_id
            # Reference quirk: every changed line takes the price and options of the last
            # replacement item checked above (`variant` is set whenever this loop runs).
            line.price = variant.price
            line.options = variant.options
        order.status = "pending (item modified)"
        return order

    @tool("write")
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Order:
        """Pay a pending order with a different saved payment method.

        Explain the change and get an explicit yes from the customer first. The full amount is
        charged to the new method and refunded to the old one.

        Args:
            order_id: Id of the order, with its leading '#', e.g. '#W0000000'.
            payment_method_id: Saved payment method to use instead, e.g. 'gift_card_0000000' or
                'credit_card_0000000' (see the user's details).

        Returns:
            The order after the change.

        Raises:
            ValueError: If the order does not exist or is not pending, the method does not exist or
                is the current one, the order has other than one payment, or a gift card is too low.
        """
        order = self._order(order_id)
        if "pending" not in order.status:
            raise ValueError("Non-pending order cannot be modified")
        method = self._payment_method(order.user_id, payment_method_id)
        history = order.payment_history
        if len(history) != 1 or history[0].transaction_type != "payment":
            raise ValueError("There should be exactly one payment for a pending order")
        if history[0].payment_method_id == payment_method_id:
            raise ValueError("The new payment method should be different from the current one")
        amount = history[0].amount
        if isinstance(method, GiftCard) and method.balance < amount:
            raise ValueError("Insufficient gift card balance to pay for the order")
        history.extend(
            [
                OrderPayment(transaction_type="payment", amount=amount, payment_method_id=payment_method_id),
                OrderPayment(
                    transaction_type="refund", amount=amount, payment_method_id=history[0].payment_method_id
                ),
            ]
        )
        if isinstance(method, GiftCard):
            method.balance -= amount
            method.balance = round(method.balance, 2)
        old_method = self._payment_method(order.user_id, history[0].payment_method_id)
        if isinstance(old_method, GiftCard):
            old_method.balance += amount
            old_method.balance = round(old_method.balance, 2)
        return order

    @tool("write")
    def modify_user_address(
        self,
        user_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> User:
        """Change a customer's default address.

        Explain the change and get an explicit yes from the customer first.

        Args:
            user_id: User id, e.g. 'sara_doe_496'.
            address1: Street line, e.g. '123 Main St'.
            address2: Second line, e.g. 'Apt 1', or an empty string.
            city: City, e.g. 'San Francisco'.
            state: State, e.g. 'CA'.
            country: Country, e.g. 'USA'.
            zip: Zip code, e.g. '12345'.

        Returns:
            The user profile with its new address.

        Raises:
            ValueError: If the user does not exist.
        """
        user = self._user(user_id)
        user.address = UserAddress(
            address1=address1,
            address2=address2,
            city=city,
            state=state,
            country=country,
            zip=zip,
        )
        return user

    @tool("write")
    def return_delivered_order_items(self, order_id: str, item_ids: list[str], payment_method_id: str) -> Order:
        """Request a return of delivered items; the customer then gets return instructions by email.

        A delivered order can be returned or exchanged only once. Explain the details and get an
        explicit yes from the customer first. The refund goes to the order's original payment
        method or to a gift card.

        Args:
            order_id: Id of the order, with its leading '#', e.g. '#W0000000'.
            item_ids: Item ids to return, e.g. ['1008292230']; repeat an id to return several units.
            payment_method_id: Where the refund goes: the original payment method of the order or a
                gift card of the customer, e.g. 'gift_card_0000000'.

        Returns:
            The order with the return requested.

        Raises:
            ValueError: If the order does not exist or is not delivered, the refund method is not
                allowed, or items are not in the order.
        """
        order = self._order(order_id)
        if order.status != "delivered":
            raise ValueError("Non-delivered order cannot be returned")
        user = self._user(order.user_id)
        method = self._payment_method(user.user_id, payment_method_id)
        if not isinstance(method, GiftCard) and payment_method_id != order.payment_history[0].payment_method_id:
            raise ValueError("Payment method should be the original payment method")
        self._check_items_in_order(order, item_ids, "Some item not found")
        order.status = "return requested"
        order.return_items = sorted(item_ids)
        order.return_payment_method_id = payment_method_id
        return order

    @tool("generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation over to a human agent, with a summary of the customer's issue.

        Transfer only when the customer explicitly asks for a human, or when the request cannot be
        handled with the policy and the tools available.

        Args:
            summary: Short description of the customer's issue.

        Returns:
            A confirmation of the transfer.
        """
        return "Transfer successful"
