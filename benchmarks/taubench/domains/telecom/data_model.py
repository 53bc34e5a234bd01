"""Telecom (agent side) records: plans, customers, lines, bills and devices.

Field names, types, defaults and order follow tau2's telecom `db.toml` schema: tool results are these models dumped
to JSON and the DB fingerprint hashes their dump. Every record forbids unknown fields, as tau2's do.
"""

from __future__ import annotations

import datetime
from enum import Enum
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_START_DATE = datetime.date(2025, 1, 1)
"""The creation date of a customer record that gives none."""


def _start_date() -> Any:
    return DEFAULT_START_DATE


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Address(_Record):
    """A billing address."""

    street: str = Field(description="Street and number")
    city: str = Field(description="City")
    state: str = Field(description="State code, e.g. CA")
    zip_code: str = Field(description="ZIP code")


class Plan(_Record):
    """A service plan."""

    plan_id: str = Field(description="Plan id, e.g. 'P1001'")
    name: str = Field(description="Plan name")
    data_limit_gb: float = Field(description="Monthly data allowance (GB)")
    price_per_month: float = Field(description="Monthly price (USD)")
    data_refueling_price_per_gb: float = Field(description="Price of one extra GB (USD)")


class DeviceType(str, Enum):
    """Kinds of device."""

    PHONE = "phone"
    ROUTER = "router"
    TABLET = "tablet"
    WATCH = "watch"
    OTHER = "other"


class Device(_Record):
    """A customer device."""

    device_id: str = Field(description="Device id, e.g. 'D1001'")
    device_type: DeviceType = Field(description="Kind of device")
    model: str = Field(description="Model name")
    imei: Optional[str] = Field(None, description="IMEI")
    is_esim_capable: bool = Field(description="Whether the device takes an eSIM")
    activated: bool = Field(False, description="Whether the device is activated")
    activation_date: Optional[datetime.datetime] = Field(None, description="Activation time (EST)")
    last_esim_transfer_date: Optional[datetime.datetime] = Field(None, description="Last eSIM transfer (EST)")


class LineStatus(str, Enum):
    """States of a line."""

    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_ACTIVATION = "Pending Activation"
    CLOSED = "Closed"


class Line(_Record):
    """A phone or data line."""

    line_id: str = Field(description="Line id, e.g. 'L1001'")
    phone_number: str = Field(description="The line's phone number")
    status: LineStatus = Field(LineStatus.PENDING_ACTIVATION, description="Line status")
    plan_id: str = Field(description="The line's plan")
    device_id: Optional[str] = Field(None, description="The device on the line")
    data_used_gb: float = Field(0.0, description="Data used this billing cycle (GB)")
    data_refueling_gb: float = Field(0.0, description="Data added this billing cycle (GB)")
    roaming_enabled: bool = Field(False, description="Whether international roaming is on")
    contract_end_date: Optional[datetime.date] = Field(None, description="Contract end (EST)")
    last_plan_change_date: Optional[datetime.date] = Field(None, description="Last plan change (EST)")
    last_sim_replacement_date: Optional[datetime.date] = Field(None, description="Last SIM replacement (EST)")
    suspension_start_date: Optional[datetime.date] = Field(None, description="Start of the suspension (EST)")


class LineItem(_Record):
    """One charge or credit of a bill."""

    description: str = Field(description="What the item is")
    amount: float = Field(description="USD; negative for credits")
    date: datetime.date = Field(description="Date applied (EST)")
    item_type: str = Field(description="Category, e.g. Charge, Credit, Payment")


class BillStatus(str, Enum):
    """States of a bill."""

    DRAFT = "Draft"
    ISSUED = "Issued"
    AWAITING_PAYMENT = "Awaiting Payment"
    PAID = "Paid"
    OVERDUE = "Overdue"
    DISPUTED = "Disputed"


class Bill(_Record):
    """A customer's bill."""

    bill_id: str = Field(description="Bill id, e.g. 'B1001'")
    customer_id: str = Field(description="The customer billed")
    period_start: datetime.date = Field(description="Billing period start (EST)")
    period_end: datetime.date = Field(description="Billing period end (EST)")
    issue_date: datetime.date = Field(description="Issue date (EST)")
    total_due: float = Field(description="Amount due (USD)")
    due_date: datetime.date = Field(description="Payment due date (EST)")
    line_items: list[LineItem] = Field(default_factory=list, description="Charges, credits and payments")
    status: BillStatus = Field(BillStatus.DRAFT, description="Bill status")


class AccountStatus(str, Enum):
    """States of a customer account."""

    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_VERIFICATION = "Pending Verification"
    CLOSED = "Closed"


class PaymentMethodType(str, Enum):
    """Kinds of payment method."""

    CREDIT_CARD = "Credit Card"
    DEBIT_CARD = "Debit Card"
    PAYPAL = "PayPal"


class PaymentMethod(_Record):
    """A stored payment method."""

    method_type: PaymentMethodType = Field(description="Kind of method")
    account_number_last_4: str = Field(description="Last four digits")
    expiration_date: str = Field(description="Expiry, MM/YYYY")


class Customer(_Record):
    """A customer account."""

    customer_id: str = Field(description="Customer id, e.g. 'C1001'")
    full_name: str = Field(description="Full name")
    date_of_birth: str = Field(description="Date of birth, YYYY-MM-DD")
    email: str = Field(description="Email address")
    phone_number: str = Field(description="Primary contact number")
    address: Address = Field(description="Billing address")
    account_status: AccountStatus = Field(AccountStatus.PENDING_VERIFICATION, description="Account status")
    payment_methods: list[PaymentMethod] = Field(default_factory=list, description="Stored payment methods")
    line_ids: list[str] = Field(default_factory=list, description="The customer's lines")
    bill_ids: list[str] = Field(default_factory=list, description="The customer's bills")
    created_at: datetime.datetime = Field(
        default_factory=lambda: _start_date(),  # a date, unvalidated, as the reference's default
        description="Account creation time (EST)",
    )
    last_extension_date: Optional[datetime.date] = Field(None, description="Last payment extension (EST)")
    goodwill_credit_used_this_year: float = Field(0.0, description="Goodwill credit used this year (USD)")


class TelecomDB(_Record):
    """The carrier's database."""

    plans: list[Plan] = Field(default_factory=list, description="Service plans")
    customers: list[Customer] = Field(default_factory=list, description="Customers")
    lines: list[Line] = Field(default_factory=list, description="Lines")
    bills: list[Bill] = Field(default_factory=list, description="Bills")
    devices: list[Device] = Field(default_factory=list, description="Devices")
