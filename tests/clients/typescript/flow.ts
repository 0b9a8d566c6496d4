// The README's first request through openapi-fetch typed by the paths openapi-typescript
// generates from docs/openapi.json (tests/clients/run.sh). Every read goes through the
// generated types: `tsc --strict` fails on a field the document does not declare.
//
//     node flow.js BASE_URL REFRESH_TOKEN

import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

declare const process: { argv: string[]; exit(code: number): never };

type Schemas = components["schemas"];
const version = { "x-accept-version": "2.0" } as const;

function check(condition: boolean, what: string): void {
  if (!condition) {
    console.error(`check failed: ${what}`);
    process.exit(1);
  }
}

/** The success body, or the failure named. */
function ok<T>(answer: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (answer.data === undefined) {
    console.error(`${what}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
    process.exit(1);
  }
  return answer.data;
}

function only<T>(records: { [key: string]: T }, key: string, what: string): T {
  const record = records[key];
  if (record === undefined) {
    console.error(`${what}: no ${key} in ${JSON.stringify(records)}`);
    process.exit(1);
  }
  return record;
}

async function main(base: string, refresh: string): Promise<void> {
  const open = createClient<paths>({ baseUrl: base });

  const up: Schemas["Status"] = ok(await open.GET("/status"), "GET /status");
  check(up.status === "OK", `status ${up.status}`);
  check(up.serverTimestamp.endsWith("Z"), `serverTimestamp ${up.serverTimestamp}`);

  // A refresh, read through the token response's typed fields.
  const pair: Schemas["TokenResponse"] = ok(
    await open.POST("/oauth/token", {
      body: {
        grant_type: "refresh_token",
        refresh_token: refresh,
        client_id: "demo-pos",
        client_secret: "demo-pos-secret",
      },
    }),
    "POST /oauth/token",
  );
  check(pair.token_type === "Bearer", `token_type ${pair.token_type}`);
  check(pair.expires_in > 0, `expires_in ${pair.expires_in}`);
  check(pair.scope.split(" ").sort().join(" ") === "admin read write", `scope ${pair.scope}`);
  check(pair.refresh_token !== refresh, "the refresh token rotates");

  const api = createClient<paths>({
    baseUrl: base,
    headers: { Authorization: `Bearer ${pair.access_token}` },
  });

  // A product with one price instance.
  const created = ok(
    await api.POST("/product", {
      params: { header: version },
      body: {
        products: {
          latte: {
            name: "Latte",
            instances: { regular: { name: "Regular", price: "300", taxPercentage: "0.200" } },
          },
        },
      },
    }),
    "POST /product",
  );
  const latte: Schemas["Product"] = only(created.products, "latte", "POST /product");
  check(latte.name === "Latte", `name ${latte.name}`);
  const instances: Schemas["ProductInstance"][] = Object.values(latte.instances);
  check(instances.length === 1 && instances[0]?.price === "300", "the instance's price");

  const stores = ok(await api.GET("/store", { params: { header: version } }), "GET /store");
  const store = Math.min(...Object.values(stores.stores).map((s) => s.id));

  // A basket of two, paid by card, then completed.
  const basket = only(
    ok(
      await api.POST("/basket", {
        params: { header: version },
        body: {
          baskets: {
            sale: { storeId: store, basketProducts: { line: { productId: latte.id, quantity: 2 } } },
          },
        },
      }),
      "POST /basket",
    ).baskets,
    "sale",
    "POST /basket",
  );
  check(basket.total === "600" && basket.totalTax === "100", `totals ${basket.total}, ${basket.totalTax}`);
  check(basket.completed === false, "a new basket is open");

  const paid = only(
    ok(
      await api.POST("/transaction", {
        params: { header: version },
        body: {
          transactions: { card: { basketId: basket.id, type: "CARD", amount: 600, completed: true } },
        },
      }),
      "POST /transaction",
    ).transactions,
    "card",
    "POST /transaction",
  );
  check(paid.amount === 600 && paid.completed === true, "the payment");

  const done = only(
    ok(
      await api.POST("/basket", {
        params: { header: version },
        body: { baskets: { done: { id: basket.id, completed: true } } },
      }),
      "POST /basket (complete)",
    ).baskets,
    "done",
    "POST /basket (complete)",
  );
  check(done.completed === true && done.completeDate !== null, "the basket is completed");

  // A filtered read: the latte alone, with its stock at the store.
  const read = ok(
    await api.GET("/product", {
      params: { header: { ...version, productIds: String(latte.id), storeId: String(store) } },
    }),
    "GET /product",
  );
  check(Object.keys(read.products).join() === String(latte.id), "one product read");
  const stocked = only(read.products, String(latte.id), "GET /product");
  check(stocked.stockSold === 2 && stocked.stockLeft === -2, `stock ${stocked.stockSold}, ${stocked.stockLeft}`);

  // A stock count finds 5 where -2 were expected: a surplus of 7.
  const count = only(
    ok(
      await api.POST("/stock/reconcile", {
        params: { header: version },
        body: {
          stockReconciliations: {
            evening: {
              storeId: store,
              products: { [String(latte.id)]: { productId: latte.id, quantity: 5 } },
              completed: true,
            },
          },
        },
      }),
      "POST /stock/reconcile",
    ).stockReconciliations,
    "evening",
    "POST /stock/reconcile",
  );
  const line: Schemas["CountLine"] = only(count.products, String(latte.id), "the count");
  check(line.expected === -2 && line.counted === 5 && line.discrepancy === 7, "the count's line");
  const day = 24 * 3600 * 1000;
  const header = (t: number): string => new Date(t).toISOString().slice(0, 19).replace("T", " ");
  const totals = ok(
    await api.GET("/stock/reconcile", {
      params: {
        header: {
          ...version,
          from: header(Date.now() - day),
          to: header(Date.now() + day),
          storeIds: String(store),
        },
      },
    }),
    "GET /stock/reconcile",
  );
  const surplus = only(totals.surplus ?? {}, String(store), "the surplus totals");
  check(surplus[String(latte.id)] === 7, "a surplus of 7 at the store");

  // A write whose every object is refused: 422 with the typed error envelope. (A product
  // without a name no longer type-checks: the create schema requires it.)
  const refused = await api.POST("/product", {
    params: { header: version },
    body: { products: { long: { name: "Long", barcode: "1".repeat(65) } } },
  });
  check(refused.response.status === 422, `status ${refused.response.status}`);
  const envelope: Schemas["ErrorEnvelope"] | undefined = refused.error;
  if (envelope === undefined) {
    console.error("the 422 has no body");
    process.exit(1);
  }
  check(envelope.error.code === 422, `error.code ${envelope.error.code}`);
  const record = only(envelope.api.message.error ?? {}, "110:long", "the 422's records");
  check(record.code === "validationError" && record.objectRef === "long", JSON.stringify(record));
  console.log(
    "typescript client: status, refresh, product, basket, payment, completion, filtered read, count, 422: ok",
  );
}

const [base, refresh] = process.argv.slice(2);
if (base === undefined || refresh === undefined) {
  console.error("usage: node flow.js BASE_URL REFRESH_TOKEN");
  process.exit(2);
}
main(base, refresh).catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
