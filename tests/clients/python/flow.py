"""The README's first request through the Python client openapi-python-client generates from
docs/openapi.json, with its typed methods and models only (tests/clients/run.sh; `mypy --strict`
checks this file and the client together).

    python flow.py BASE_URL REFRESH_TOKEN"""

import datetime
import sys
from typing import TypeVar

from merchantd_client import AuthenticatedClient, Client
from merchantd_client.api.basket import create_basket
from merchantd_client.api.health import status
from merchantd_client.api.oauth import token
from merchantd_client.api.product import create_product, list_product
from merchantd_client.api.stock import create_count, list_count
from merchantd_client.api.store import list_store
from merchantd_client.api.transaction import create_transaction
from merchantd_client.types import Unset
from merchantd_client.models import (
    ApiVersion,
    BasketCreate,
    BasketCreateBasketProducts,
    BasketLineCreate,
    BasketList,
    BasketUpdate,
    BasketWriteBody,
    BasketWriteBodyBaskets,
    CountCreate,
    CountCreateProducts,
    CountLineCreate,
    CountList,
    CountWriteBody,
    CountWriteBodyStockReconciliations,
    ErrorEnvelope,
    ProductCreate,
    ProductCreateInstances,
    ProductInstanceCreate,
    ProductList,
    ProductWriteBody,
    ProductWriteBodyProducts,
    Status,
    StoreList,
    TokenRequest,
    TokenRequestGrantType,
    TokenResponse,
    TransactionCreate,
    TransactionCreateType,
    TransactionList,
    TransactionWriteBody,
    TransactionWriteBodyTransactions,
)

V2 = ApiVersion.V2_0
T = TypeVar("T")


def expect(answer: object, kind: type[T], what: str) -> T:
    """The parsed answer as the type the document promises for success, or a failure."""
    if not isinstance(answer, kind):
        sys.exit(f"{what}: expected {kind.__name__}, got {answer!r}")
    return answer


def check(condition: bool, what: str) -> None:
    if not condition:
        sys.exit(f"check failed: {what}")


def main(base: str, refresh: str) -> None:
    public = Client(base_url=base, raise_on_unexpected_status=True)

    up = expect(status.sync(client=public), Status, "GET /status")
    check(up.status == "OK", f"status is {up.status}")
    check(up.server_timestamp.tzinfo is not None, "serverTimestamp is a UTC date-time")

    # A refresh, read through the token response's typed fields.
    form = TokenRequest(
        grant_type=TokenRequestGrantType.REFRESH_TOKEN,
        refresh_token=refresh,
        client_id="demo-pos",
        client_secret="demo-pos-secret",
    )
    pair = expect(token.sync(client=public, body=form), TokenResponse, "POST /oauth/token")
    check(str(pair.token_type) == "Bearer", f"token_type {pair.token_type}")
    check(pair.expires_in > 0, f"expires_in {pair.expires_in}")
    check(set(pair.scope.split()) == {"read", "write", "admin"}, f"scope {pair.scope}")
    check(pair.refresh_token != refresh, "the refresh token rotates")

    api = AuthenticatedClient(base_url=base, token=pair.access_token, raise_on_unexpected_status=True)

    # A product with one price instance.
    instances = ProductCreateInstances()
    instances["regular"] = ProductInstanceCreate(name="Regular", price="300", tax_percentage="0.200")
    products = ProductWriteBodyProducts()
    products["latte"] = ProductCreate(name="Latte", instances=instances)
    created = expect(
        create_product.sync(client=api, x_accept_version=V2, body=ProductWriteBody(products=products)),
        ProductList,
        "POST /product",
    )
    latte = created.products["latte"]
    check(latte.name == "Latte", f"name {latte.name}")
    (instance,) = latte.instances.additional_properties.values()
    check(instance.price == "300" and instance.tax_percentage == "0.200", "the instance's price")

    stores = expect(list_store.sync(client=api, x_accept_version=V2), StoreList, "GET /store")
    store = min(s.id for s in stores.stores.additional_properties.values())

    # A basket of two, paid by card, then completed.
    lines = BasketCreateBasketProducts()
    lines["line"] = BasketLineCreate(product_id=latte.id, quantity=2)
    baskets = BasketWriteBodyBaskets()
    baskets["sale"] = BasketCreate(store_id=store, basket_products=lines)
    basket = expect(
        create_basket.sync(client=api, x_accept_version=V2, body=BasketWriteBody(baskets=baskets)),
        BasketList,
        "POST /basket",
    ).baskets["sale"]
    check(basket.total == "600" and basket.total_tax == "100", f"totals {basket.total}, {basket.total_tax}")
    check(not basket.completed, "a new basket is open")

    payments = TransactionWriteBodyTransactions()
    payments["card"] = TransactionCreate(
        basket_id=basket.id, type_=TransactionCreateType.CARD, amount=600, completed=True
    )
    paid = expect(
        create_transaction.sync(client=api, x_accept_version=V2, body=TransactionWriteBody(transactions=payments)),
        TransactionList,
        "POST /transaction",
    ).transactions["card"]
    check(paid.amount == 600 and paid.completed is True, "the payment")

    done = BasketWriteBodyBaskets()
    done["done"] = BasketUpdate(id=basket.id, completed=True)
    completed = expect(
        create_basket.sync(client=api, x_accept_version=V2, body=BasketWriteBody(baskets=done)),
        BasketList,
        "POST /basket (complete)",
    ).baskets["done"]
    check(completed.completed is True, "the basket is completed")
    check(isinstance(completed.complete_date, datetime.datetime), "completeDate is a date-time")

    # A filtered read: the latte alone, with its stock at the store.
    read = expect(
        list_product.sync(
            client=api, x_accept_version=V2, product_ids=str(latte.id), store_id=str(store)
        ),
        ProductList,
        "GET /product",
    )
    check(list(read.products.additional_properties) == [str(latte.id)], "one product read")
    stocked = read.products[str(latte.id)]
    check(stocked.stock_sold == 2 and stocked.stock_left == -2, f"stock {stocked.stock_sold}, {stocked.stock_left}")

    # A stock count finds 5 where -2 were expected: a surplus of 7.
    counted = CountCreateProducts()
    counted[str(latte.id)] = CountLineCreate(product_id=latte.id, quantity=5)
    counts = CountWriteBodyStockReconciliations()
    counts["evening"] = CountCreate(store_id=store, products=counted, completed=True)
    count = expect(
        create_count.sync(client=api, x_accept_version=V2, body=CountWriteBody(stock_reconciliations=counts)),
        CountList,
        "POST /stock/reconcile",
    ).stock_reconciliations["evening"]
    line = count.products[str(latte.id)]
    check(line.expected == -2 and line.counted == 5 and line.discrepancy == 7, "the count's line")
    check(len(count.surplus_entry_ids) == 1, "one surplus entry")
    now = datetime.datetime.now(datetime.timezone.utc)
    window = [(now + datetime.timedelta(days=d)).strftime("%Y-%m-%d %H:%M:%S") for d in (-1, 1)]
    totals = expect(
        list_count.sync(client=api, x_accept_version=V2, from_=window[0], to=window[1], store_ids=str(store)),
        CountList,
        "GET /stock/reconcile",
    )
    surplus = totals.surplus
    if isinstance(surplus, Unset):
        sys.exit("GET /stock/reconcile: no surplus totals")
    check(surplus[str(store)][str(latte.id)] == 7, "a surplus of 7 at the store")

    # A write whose every object is refused: 422 with the typed error envelope. (A product
    # without a name no longer type-checks: the create schema requires it.)
    bad = ProductWriteBodyProducts()
    bad["long"] = ProductCreate(name="Long", barcode="1" * 65)
    refused = create_product.sync_detailed(client=api, x_accept_version=V2, body=ProductWriteBody(products=bad))
    check(refused.status_code == 422, f"status {refused.status_code}")
    envelope = expect(refused.parsed, ErrorEnvelope, "the 422's body")
    check(envelope.error.code == 422, f"error.code {envelope.error.code}")
    errors = envelope.api.message.error
    if isinstance(errors, Unset):
        sys.exit("the 422 has no error records")
    record = errors["110:long"]
    check(record.code == "validationError" and record.object_ref == "long", f"record {record}")
    print("python client: status, refresh, product, basket, payment, completion, filtered read, count, 422: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
