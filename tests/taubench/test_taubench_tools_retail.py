"""Retail tools: tool lists per task set, reference quirks, error texts and effects on the DB."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.taubench.environment import DomainRuntime, Environment


@pytest.fixture
def env(retail: DomainRuntime) -> Environment:
    return retail.environment()


def _order(env: Environment, status: str, min_items: int = 1, paid_with: str = "") -> Any:
    return next(
        o for o in env.db.orders.values()
        if o.status == status and len(o.items) >= min_items and o.payment_history[0].payment_method_id.startswith(paid_with)
    )


def _other_item(env: Environment, product_id: str, item_id: str) -> Any:
    variants = env.db.products[product_id].variants
    return next(v for k, v in variants.items() if k != item_id and v.available)


def test_get_item_details_exists_in_v1_only(runtimes: dict[tuple[str, str], DomainRuntime]) -> None:
    v1, v0 = runtimes[("v1", "retail")], runtimes[("v0", "retail")]
    assert len(v1.tool_names()) == 16 and len(v0.tool_names()) == 15
    assert set(v1.tool_names()) - set(v0.tool_names()) == {"get_item_details"}
    item_id = next(iter(next(iter(v1.store.db_json("retail")["products"].values()))["variants"]))
    item = v1.environment().execute("get_item_details", {"item_id": item_id}).json()
    assert item["item_id"] == item_id and list(item) == ["item_id", "options", "available", "price"]
    assert v1.environment().execute("get_item_details", {"item_id": "0"}).content == "Error: Item not found"
    assert v0.environment().execute("get_item_details", {"item_id": item_id}).content == (
        "Error: Tool 'get_item_details' not found."
    )


def test_kinds(retail: DomainRuntime) -> None:
    writes = {n for n in retail.tool_names() if retail.kind(n) == "write"}
    assert writes == {
        "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
        "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
        "return_delivered_order_items",
    }


def test_user_lookup_ignores_case_but_not_zip_type(env: Environment) -> None:
    user = next(iter(env.db.users.values()))
    found = env.execute("find_user_id_by_name_zip", {"first_name": user.name.first_name.upper(),
                                                     "last_name": user.name.last_name.lower(),
                                                     "zip": user.address.zip})
    assert found.content == user.user_id  # a plain string, not JSON
    assert env.execute("find_user_id_by_name_zip", {"first_name": user.name.first_name, "last_name": user.name.last_name,
                                                    "zip": int(user.address.zip)}).content == "Error: User not found"
    assert env.execute("find_user_id_by_email", {"email": user.email.upper()}).content == user.user_id


def test_product_list_is_a_sorted_json_text(env: Environment) -> None:
    content = env.execute("list_all_product_types", {}).content
    names = json.loads(content)
    assert len(names) == 50 and list(names) == sorted(names)


def test_item_change_gives_every_line_the_last_new_items_price(env: Environment) -> None:
    order = _order(env, "pending", min_items=3)
    lines = order.items[:2]
    new = [_other_item(env, line.product_id, line.item_id) for line in lines]
    payment = order.payment_history[0].payment_method_id
    difference = (new[0].price - lines[0].price) + (new[1].price - lines[1].price)
    outcome = env.execute("modify_pending_order_items", {
        "order_id": order.order_id, "item_ids": [line.item_id for line in lines],
        "new_item_ids": [v.item_id for v in new], "payment_method_id": payment,
    })
    result = outcome.json()
    assert not outcome.error and result["status"] == "pending (item modified)"
    changed = result["items"][:2]
    assert [c["item_id"] for c in changed] == [v.item_id for v in new]
    assert all(c["price"] == new[-1].price and c["options"] == new[-1].options for c in changed)
    assert result["payment_history"][-1] == {
        "transaction_type": "payment" if difference > 0 else "refund",
        "amount": abs(difference),
        "payment_method_id": payment,
    }
    # A second change is refused: the status is no longer exactly 'pending'.
    assert env.execute("modify_pending_order_items", {
        "order_id": order.order_id, "item_ids": [], "new_item_ids": [], "payment_method_id": payment,
    }).content == "Error: Non-pending order cannot be modified"


def test_item_change_errors(env: Environment) -> None:
    order = _order(env, "pending")
    item = order.items[0].item_id
    call = {"order_id": order.order_id, "payment_method_id": "x"}
    assert env.execute("modify_pending_order_items", {**call, "item_ids": [item], "new_item_ids": [item]}).content == (
        "Error: The new item id should be different from the old item id"
    )
    assert env.execute("modify_pending_order_items", {**call, "item_ids": [item], "new_item_ids": []}).content == (
        "Error: The number of items to be exchanged should match"
    )
    assert env.execute("modify_pending_order_items", {**call, "item_ids": ["0"], "new_item_ids": ["1"]}).content == (
        "Error: 0 not found"
    )
    assert env.execute("modify_pending_order_items", {**call, "item_ids": [item], "new_item_ids": ["1"]}).content == (
        "Error: Variant not found"
    )


def test_cancellation_refunds_gift_cards_at_once(env: Environment) -> None:
    order = _order(env, "pending", paid_with="gift_card")
    payment = order.payment_history[0]
    card = env.db.users[order.user_id].payment_methods[payment.payment_method_id]
    before = card.balance
    assert env.execute("cancel_pending_order", {"order_id": order.order_id, "reason": "because"}).content == (
        "Error: Invalid reason"
    )
    result = env.execute("cancel_pending_order", {"order_id": order.order_id, "reason": "ordered by mistake"}).json()
    assert result["status"] == "cancelled" and result["cancel_reason"] == "ordered by mistake"
    assert result["payment_history"][-1]["transaction_type"] == "refund"
    assert card.balance == round(before + payment.amount, 2)
    assert env.execute("cancel_pending_order", {"order_id": order.order_id, "reason": "ordered by mistake"}).content == (
        "Error: Non-pending order cannot be cancelled"
    )


def test_returns_go_to_the_original_method_or_a_gift_card(env: Environment) -> None:
    order = _order(env, "delivered", paid_with="credit_card")
    user = env.db.users[order.user_id]
    others = [m for m in user.payment_methods if m != order.payment_history[0].payment_method_id]
    items = [order.items[0].item_id]
    for method in others:
        outcome = env.execute("return_delivered_order_items",
                              {"order_id": order.order_id, "item_ids": items, "payment_method_id": method})
        if method.startswith("gift_card"):
            assert outcome.json()["return_payment_method_id"] == method
            return
        assert outcome.content == "Error: Payment method should be the original payment method"
    result = env.execute("return_delivered_order_items", {"order_id": order.order_id, "item_ids": items * 9,
                                                          "payment_method_id": order.payment_history[0].payment_method_id})
    assert result.content == "Error: Some item not found"


def test_exchange_records_sorted_ids_and_rounded_difference(env: Environment) -> None:
    order = _order(env, "delivered", min_items=2)
    lines = order.items[:2]
    new = [_other_item(env, line.product_id, line.item_id) for line in lines]
    result = env.execute("exchange_delivered_order_items", {
        "order_id": order.order_id, "item_ids": [line.item_id for line in lines][::-1],
        "new_item_ids": [v.item_id for v in new][::-1], "payment_method_id": order.payment_history[0].payment_method_id,
    }).json()
    assert result["status"] == "exchange requested"
    assert result["exchange_items"] == sorted(line.item_id for line in lines)
    assert result["exchange_new_items"] == sorted(v.item_id for v in new)
    expected = round(sum(v.price - line.price for v, line in zip(new[::-1], lines[::-1])), 2)
    assert result["exchange_price_difference"] == expected


def test_address_validation_error_names_the_model(env: Environment) -> None:
    order = _order(env, "pending")
    outcome = env.execute("modify_pending_order_address", {
        "order_id": order.order_id, "address1": "1 A St", "address2": "", "city": "X", "state": "CA",
        "country": "USA", "zip": 12345,
    })
    assert outcome.content.startswith("Error: 1 validation error for UserAddress\nzip\n  Input should be a valid string")


def test_argument_errors_name_the_retail_class(env: Environment) -> None:
    assert env.execute("get_order_details", {"id": "#W1"}).content == (
        "Error: RetailTools.get_order_details() got an unexpected keyword argument 'id'"
    )
