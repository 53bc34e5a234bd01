"""The telecom agent's tools with tau2's exact behaviour: checks, error texts, DB effects and results.

Besides the 13 tools the agent is offered, the class has the reference's task-setup functions (`set_data_usage`,
`suspend_line_for_overdue_bill`, ...) and reward assertions (`assert_*`): tasks call them by name through
`initialization_actions` and `env_assertions`, never the agent. The class name matters: a missing or unexpected
argument is reported with Python's own message, which names `TelecomTools.<tool>()`.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any, Optional

from benchmarks.taubench.domain_tools import DomainTools, tool
from benchmarks.taubench.domains.telecom.data_model import (
    Bill,
    BillStatus,
    Customer,
    Device,
    Line,
    LineItem,
    LineStatus,
    Plan,
    TelecomDB,
)

TODAY = datetime.date(2025, 2, 25)
"""The simulated current date of the telecom domain."""


def _first_of_next_month(day: datetime.date) -> datetime.date:
    return (day.replace(day=1) + datetime.timedelta(days=32)).replace(day=1)


class TelecomTools(DomainTools):
    """The carrier's customer-service tools over a `TelecomDB`."""

    db: TelecomDB

    # --- lookups (raise ValueError with the reference's texts) -------------------------------

    def _line_by_phone(self, phone_number: str) -> Line:
        for line in self.db.lines:
            if line.phone_number == phone_number:
                return line
        raise ValueError(f"Line with phone number {phone_number} not found")

    def _line(self, line_id: str) -> Line:
        for line in self.db.lines:
            if line.line_id == line_id:
                return line
        raise ValueError(f"Line with ID {line_id} not found")

    def _plan(self, plan_id: str) -> Plan:
        for plan in self.db.plans:
            if plan.plan_id == plan_id:
                return plan
        raise ValueError(f"Plan with ID {plan_id} not found")

    def _device(self, device_id: str) -> Device:
        for device in self.db.devices:
            if device.device_id == device_id:
                return device
        raise ValueError(f"Device with ID {device_id} not found")

    def _bill(self, bill_id: str) -> Bill:
        for bill in self.db.bills:
            if bill.bill_id == bill_id:
                return bill
        raise ValueError(f"Bill with ID {bill_id} not found")

    def _customer_line(self, customer_id: str, line_id: str) -> Line:
        customer = self.get_customer_by_id(customer_id)
        if line_id not in customer.line_ids:
            raise ValueError(f"Line {line_id} not found for customer {customer_id}")
        return self._line(line_id)

    def bills_awaiting_payment(self, customer: Customer) -> list[Bill]:
        """The customer's bills in `Awaiting Payment`, in the customer's order."""
        return [bill for bill in map(self._bill, customer.bill_ids) if bill.status == BillStatus.AWAITING_PAYMENT]

    def set_bill_paid(self, bill_id: str) -> None:
        """Mark a bill paid (the environment does it when the customer pays a payment request)."""
        self._bill(bill_id).status = BillStatus.PAID

    def line_by_phone(self, phone_number: str) -> Line:
        """The line with this phone number.

        Raises:
            ValueError: if there is none.
        """
        return self._line_by_phone(phone_number)

    def plan(self, plan_id: str) -> Plan:
        """The plan with this id.

        Raises:
            ValueError: if there is none.
        """
        return self._plan(plan_id)

    def _charge(self, customer_id: str, amount: float, description: str) -> None:
        """Add a one-time item to the customer's draft bill, opening one for next month if there is none."""
        customer = self.get_customer_by_id(customer_id)
        draft = next((bill for bill in map(self._bill, customer.bill_ids) if bill.status == BillStatus.DRAFT), None)
        if draft is None:
            start = _first_of_next_month(TODAY)
            bill_id = f"B{uuid.uuid4().hex[:8]}"  # random, as in the reference
            draft = Bill(
                bill_id=bill_id,
                customer_id=customer_id,
                period_start=start,
                period_end=_first_of_next_month(start) - datetime.timedelta(days=1),
                issue_date=start,
                total_due=0,
                due_date=start + datetime.timedelta(days=14),
                status=BillStatus.DRAFT,
            )
            self.db.bills.append(draft)
            customer.bill_ids.append(bill_id)
        draft.line_items.append(
            LineItem(description=description, amount=amount, date=TODAY, item_type="Credit" if amount < 0 else "Charge")
        )
        draft.total_due += amount

    # --- tools ---------------------------------------------------------------------------------

    @tool("read")
    def get_customer_by_phone(self, phone_number: str) -> Customer:
        """Find the customer who owns a phone number (their contact number or one of their lines).

        Args:
            phone_number: The phone number, e.g. '555-123-2002'.

        Returns:
            The customer record.

        Raises:
            ValueError: If no customer has this number.
        """
        for customer in self.db.customers:
            if customer.phone_number == phone_number:
                return customer
            for line_id in customer.line_ids:
                if self._line(line_id).phone_number == phone_number:
                    return customer
        raise ValueError(f"Customer with phone number {phone_number} not found")

    @tool("read")
    def get_customer_by_id(self, customer_id: str) -> Customer:
        """Look up a customer by customer id.

        Args:
            customer_id: The customer id, e.g. 'C1001'.

        Returns:
            The customer record.

        Raises:
            ValueError: If there is no such customer.
        """
        for customer in self.db.customers:
            if customer.customer_id == customer_id:
                return customer
        raise ValueError(f"Customer with ID {customer_id} not found")

    @tool("read")
    def get_customer_by_name(self, full_name: str, dob: str) -> list[Customer]:
        """Find customers by full name (case-insensitive) and date of birth.

        Args:
            full_name: The customer's full name.
            dob: Date of birth, YYYY-MM-DD.

        Returns:
            The matching customers (possibly none).
        """
        return [
            customer
            for customer in self.db.customers
            if customer.full_name.lower() == full_name.lower() and customer.date_of_birth == dob
        ]

    @tool("read")
    def get_details_by_id(self, id: str) -> dict[str, Any]:  # noqa: A002 - the reference's argument name
        """Look up any record by its id: a line (L...), device (D...), bill (B...), customer (C...) or plan (P...).

        Args:
            id: The record id, e.g. 'L1001'.

        Returns:
            The record.

        Raises:
            ValueError: If the id has an unknown prefix or the record does not exist.
        """
        lookups = {"L": self._line, "D": self._device, "B": self._bill, "C": self.get_customer_by_id, "P": self._plan}
        for prefix, lookup in lookups.items():
            if id.startswith(prefix):
                return lookup(id)  # type: ignore[return-value]  # a record, dumped like a mapping
        raise ValueError(f"Unknown ID format or type: {id}")

    @tool("write")
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        """Suspend an active line of the customer (a $5/month holding fee applies).

        Args:
            customer_id: The customer id.
            line_id: The line to suspend.
            reason: Why the line is suspended.

        Returns:
            A confirmation and the updated line.

        Raises:
            ValueError: If the customer or line is not found or the line is not active.
        """
        line = self._customer_line(customer_id, line_id)
        if line.status != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend")
        line.status = LineStatus.SUSPENDED
        line.suspension_start_date = TODAY
        return {"message": "Line suspended successfully. $5/month holding fee will apply.", "line": line}

    @tool("write")
    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Reactivate a suspended (or pending) line of the customer.

        Args:
            customer_id: The customer id.
            line_id: The line to resume.

        Returns:
            A confirmation and the updated line.

        Raises:
            ValueError: If the customer or line is not found or the line is neither suspended nor pending.
        """
        line = self._customer_line(customer_id, line_id)
        if line.status not in (LineStatus.SUSPENDED, LineStatus.PENDING_ACTIVATION):
            raise ValueError("Line must be suspended to resume")
        line.status = LineStatus.ACTIVE
        line.suspension_start_date = None
        return {"message": "Line resumed successfully", "line": line}

    @tool("read")
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[Bill]:
        """The customer's bills, newest issue date first.

        Args:
            customer_id: The customer id.
            limit: How many bills at most (default 12).

        Returns:
            The bills.

        Raises:
            ValueError: If the customer or one of their bills is not found.
        """
        customer = self.get_customer_by_id(customer_id)
        bills = sorted(map(self._bill, customer.bill_ids), key=lambda bill: bill.issue_date, reverse=True)
        return bills[:limit]

    @tool("write")
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """Ask the customer to pay one of their bills; they receive the request on their phone.

        Only one bill of a customer may await payment at a time.

        Args:
            customer_id: The customer id.
            bill_id: The bill to be paid.

        Returns:
            A confirmation.

        Raises:
            ValueError: If a bill already awaits payment, or the customer or bill is not found.
        """
        customer = self.get_customer_by_id(customer_id)
        if self.bills_awaiting_payment(customer):
            raise ValueError("A bill is already awaiting payment for this customer")
        if bill_id not in customer.bill_ids:
            raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
        bill = self._bill(bill_id)
        bill.status = BillStatus.AWAITING_PAYMENT
        return f"Payment request sent to the customer for bill {bill.bill_id}"

    @tool("read")
    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Data used, allowance and extra data of a line in the current billing cycle.

        Args:
            customer_id: The customer id.
            line_id: The line id.

        Returns:
            line_id, data_used_gb, data_limit_gb, data_refueling_gb and cycle_end_date.

        Raises:
            ValueError: If the customer, line or plan is not found.
        """
        line = self._customer_line(customer_id, line_id)
        plan = self._plan(line.plan_id)
        return {
            "line_id": line_id,
            "data_used_gb": line.data_used_gb,
            "data_limit_gb": plan.data_limit_gb,
            "data_refueling_gb": line.data_refueling_gb,
            "cycle_end_date": _first_of_next_month(TODAY) - datetime.timedelta(days=1),
        }

    @tool("write")
    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        """Turn on international roaming for a line of the customer.

        Args:
            customer_id: The customer id.
            line_id: The line id.

        Returns:
            Whether roaming was enabled or already on.

        Raises:
            ValueError: If the customer or line is not found.
        """
        line = self._customer_line(customer_id, line_id)
        if line.roaming_enabled:
            return "Roaming was already enabled"
        line.roaming_enabled = True
        return "Roaming enabled successfully"

    @tool("write")
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """Turn off international roaming for a line of the customer.

        Args:
            customer_id: The customer id.
            line_id: The line id.

        Returns:
            Whether roaming was disabled or already off.

        Raises:
            ValueError: If the customer or line is not found.
        """
        line = self._customer_line(customer_id, line_id)
        if not line.roaming_enabled:
            return "Roaming was already disabled"
        line.roaming_enabled = False
        return "Roaming disabled successfully"

    @tool("generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation over to a human agent, with a summary of the customer's issue.

        Transfer only when the customer explicitly asks for a human, or when the issue cannot be solved with the
        policy and the tools available.

        Args:
            summary: Short description of the customer's issue.

        Returns:
            A confirmation of the transfer.
        """
        return "Transfer successful"

    @tool("write")
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        """Add data to a line for the current cycle, charged at the plan's per-GB refuelling price.

        Args:
            customer_id: The customer id.
            line_id: The line id.
            gb_amount: Gigabytes to add (positive).

        Returns:
            A confirmation, the line's total extra data and the charge.

        Raises:
            ValueError: If the amount is not positive or the customer, line or plan is not found.
        """
        line = self._customer_line(customer_id, line_id)
        if gb_amount <= 0:
            raise ValueError("Refuel amount must be positive")
        plan = self._plan(line.plan_id)
        charge = gb_amount * plan.data_refueling_price_per_gb
        line.data_refueling_gb += gb_amount
        self._charge(
            customer_id, charge, f"Data refueling: {gb_amount} GB at ${plan.data_refueling_price_per_gb}/GB"
        )
        return {
            "message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
            "new_data_refueling_gb": line.data_refueling_gb,
            "charge": charge,
        }

    # --- task set-up functions (initialization_actions) ------------------------------------------

    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        """Set a line's data used this cycle."""
        line = self._customer_line(customer_id, line_id)
        line.data_used_gb = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    def suspend_line_for_overdue_bill(
        self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
    ) -> str:
        """Add last month's plan charge as an overdue bill and suspend the line for it."""
        line = self._line(line_id)
        if line.status != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend for unpaid bill")
        amount = self._plan(line.plan_id).price_per_month
        if amount <= 0:
            raise ValueError("Amount must be positive for overdue bill")
        customer = self.get_customer_by_id(customer_id)
        if any(self._bill(bill_id).status == BillStatus.OVERDUE for bill_id in customer.bill_ids):
            raise ValueError("Customer already has an overdue bill")
        last_day = TODAY.replace(day=1) - datetime.timedelta(days=1)
        first_day = last_day.replace(day=1)
        bill = Bill(
            bill_id=new_bill_id,
            customer_id=customer_id,
            period_start=first_day,
            period_end=last_day,
            issue_date=first_day,
            total_due=0,
            due_date=first_day + datetime.timedelta(days=14),
            status=BillStatus.OVERDUE,
        )
        bill.line_items.append(
            LineItem(description=f"Charge for line {line.line_id}", amount=amount, date=TODAY, item_type="Charge")
        )
        bill.total_due += amount
        self.db.bills.append(bill)
        customer.bill_ids.append(new_bill_id)
        line.status = LineStatus.SUSPENDED
        line.suspension_start_date = TODAY
        if contract_ended:
            line.contract_end_date = last_day
        return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"

    # --- reward assertions (env_assertions) ------------------------------------------------------

    def assert_data_refueling_amount(self, customer_id: str, line_id: str, expected_amount: float) -> bool:
        """Whether the line's extra data equals `expected_amount` (to 1e-6)."""
        return abs(self._customer_line(customer_id, line_id).data_refueling_gb - expected_amount) < 1e-6

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: LineStatus) -> bool:
        """Whether the line has the given status."""
        return self._customer_line(customer_id, line_id).status == expected_status

    def assert_overdue_bill_exists(self, customer_id: str, overdue_bill_id: str) -> bool:
        """True if the bill is the customer's and overdue; raises otherwise (as the reference does)."""
        customer = self.get_customer_by_id(customer_id)
        if overdue_bill_id not in customer.bill_ids:
            raise ValueError(f"Overdue bill {overdue_bill_id} not found")
        if self._bill(overdue_bill_id).status != BillStatus.OVERDUE:
            raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        """Whether the bill is paid or does not exist."""
        try:
            bill: Optional[Bill] = self._bill(overdue_bill_id)
        except ValueError:
            return True
        return bill is not None and bill.status == BillStatus.PAID
