"""Example tools for `python -m gecko.convert python gecko.convert.examples.shop:*` (see ../README.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Item(BaseModel):
    """One line of an order."""

    sku: str = Field(description="Stock-keeping unit, e.g. 'MUG-01'.")
    quantity: int = Field(ge=1, description="How many.")


class Order(BaseModel):
    """An order as stored by the shop."""

    order_id: str = Field(description="Order id, e.g. 'O-1001'.")
    items: list[Item]
    status: Literal["pending", "shipped", "cancelled"]


def get_order(order_id: str) -> Order:
    """Look up an order.

    Args:
        order_id: Order id, e.g. 'O-1001'.

    Returns:
        The order.
    """
    raise NotImplementedError("an example: only its signature and docstring are used")


def place_order(items: list[Item], express: bool = False) -> Order:
    """Place a new order.

    Args:
        items: What to buy.
        express: Ship with the express service.

    Returns:
        The new order, status 'pending'.
    """
    raise NotImplementedError("an example: only its signature and docstring are used")
