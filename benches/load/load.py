#!/usr/bin/env python3
"""merchantd load benchmark driver (issue 8). Python 3 standard library only.

Run it through `benches/load/run.sh`, which builds the binary (or takes `--binary`), installs `wrk`
when missing, and then calls this script. What it does:

  1. writes a config (`workers = 1`, low PBKDF2 iterations, no OAuth rate limit) and tenant
     manifests, applies them with `merchantd tenant apply`, starts `merchantd serve` pinned to CPU 0
     on a fresh SQLite file (or a fresh PostgreSQL database, dropped afterwards);
  2. gets tokens through the real OAuth flow (authorize page, sign-in form, consent, PKCE S256);
  3. seeds through the public API (batches of 200, concurrent clients);
  4. runs the scenarios of issue 8 with `wrk` pinned to CPU 1 (this driver is pinned there too),
     several rounds, and prints the median table with ratios to the ceiling of the same round;
  5. writes the raw results as JSON under target/load/.
"""

import argparse
import contextlib
import base64
import hashlib
import html
import http.client
import json
import os
import platform
import queue
import random
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from decimal import ROUND_CEILING, Decimal
from datetime import datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
LUA_DIR = os.path.join(HERE, "lua")
REPO = os.path.dirname(os.path.dirname(HERE))
SERVER_CPU = "0"
CLIENT_CPU = "1"
REDIRECT = "http://127.0.0.1:8976/callback"
PBKDF2_ITERATIONS = 1000
BATCH = 200

# Scenario names, with the numbering as aliases.
SCENARIOS = {
    "ceiling": "1", "read": "2", "write": "3", "list": "4", "history": "5", "cold": "6",
    "memory": "7", "seed": "8", "store": "a", "mix": "b", "multi": "c", "refresh": "d",
    "basket": "e", "idle": "f", "calculate": "g", "sale": "h", "customers": "i",
    "salesreport": "j", "sync": "k", "digest": "l",
}
ALIASES = {v: k for k, v in SCENARIOS.items()}

PROFILES = {
    # runs, wrk seconds, products of the one big merchant, history ladder, multi-merchant set,
    # idle seconds of the passivation scenario
    "full": dict(runs=3, duration=10, products=10_000, history=[0, 20_000, 60_000, 200_000],
                 merchants=1000, merchant_products=200, idle_secs=30),
    "quick": dict(runs=1, duration=3, products=10_000, history=[0, 2_000, 10_000],
                  merchants=100, merchant_products=200, idle_secs=8),
}


def redact(text):
    """Hides a password in a database URL (postgres://user:secret@host/...)."""
    return re.sub(r"(postgres(?:ql)?://[^:/@\s]+):[^@\s]+@", r"\1:***@", text)


# Resident memory is read once the allocator has given back what loading freed (merchantd's
# jemalloc returns pages unused for a second); what stays is the merchant's cached state.
SETTLE_SECS = 2.0


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --------------------------------------------------------------------------------------------
# HTTP: one keep-alive connection per client object.
# --------------------------------------------------------------------------------------------

class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)

    def header_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def header(self, name):
        values = self.header_all(name)
        return values[0] if values else None


class ApiError(Exception):
    pass


class Http:
    """A tiny keep-alive HTTP/1.1 client; with a token it speaks the API (Bearer + version)."""

    def __init__(self, port, token=None):
        self.port, self.token, self.conn = port, token, None

    def close(self):
        if self.conn:
            self.conn.close()
            self.conn = None

    def request(self, method, path, body=None, headers=None):
        h = {}
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
            h["x-accept-version"] = "2.0"
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body, separators=(",", ":")).encode()
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        for attempt in (0, 1):
            reused = self.conn is not None
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=900)
            try:
                self.conn.request(method, path, body=body, headers=h)
                res = self.conn.getresponse()
                data = res.read()
                return Response(res.status, res.getheaders(), data)
            except (ConnectionError, http.client.HTTPException):
                self.close()
                if attempt or not reused:  # retry only a keep-alive connection the server closed
                    raise

    def api(self, method, path, body=None, headers=None, expect=(200, 201)):
        res = self.request(method, path, body, headers)
        if res.status not in expect:
            raise ApiError(f"{method} {path} -> {res.status}: {res.body[:500]!r}")
        return res

    def write(self, method, path, plural, objects):
        """A batch write that must succeed for every object; returns {clientKey: record}."""
        res = self.api(method, path, {plural: objects}, expect=(201,))
        body = res.json()
        errors = body.get("api", {}).get("message", {}).get("error")
        if errors:
            raise ApiError(f"{method} {path}: per-object errors {json.dumps(errors)[:500]}")
        return body[plural]


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hidden_value(page, name):
    m = re.search(r'name="%s" value="([^"]*)"' % re.escape(name), page)
    return html.unescape(m.group(1)) if m else None


def oauth_login(port, client_id, client_secret, email, password, scope="read write admin"):
    """The authorization-code flow as a browser and a client do it; returns the token answer."""
    verifier = b64url(secrets.token_bytes(32))
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    fields = [("response_type", "code"), ("client_id", client_id), ("redirect_uri", REDIRECT),
              ("scope", scope), ("state", "bench"), ("code_challenge", challenge),
              ("code_challenge_method", "S256")]
    browser = Http(port)
    cookies = {}

    def remember(res):
        for value in res.header_all("set-cookie"):
            name, _, rest = value.partition("=")
            cookies[name.strip()] = rest.split(";")[0]
        return res

    def form_post(extra):
        body = urllib.parse.urlencode(fields + [("csrf_token", csrf)] + extra)
        return remember(browser.request("POST", "/oauth/authorize", body, {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}))

    page = remember(browser.request("GET", "/oauth/authorize?" + urllib.parse.urlencode(fields)))
    if page.status != 200:
        raise ApiError(f"authorize page: {page.status} {page.body[:300]!r}")
    csrf = hidden_value(page.body.decode(), "csrf_token")
    consent = form_post([("email", email), ("password", password)])
    if consent.status != 200 or b"decision" not in consent.body:
        raise ApiError(f"sign-in: {consent.status} {consent.body[:300]!r}")
    csrf = hidden_value(consent.body.decode(), "csrf_token") or csrf
    redirect = form_post([("decision", "approve")])
    location = redirect.header("location") or ""
    code = urllib.parse.parse_qs(urllib.parse.urlparse(location).query).get("code", [None])[0]
    if redirect.status != 302 or not code:
        raise ApiError(f"consent: {redirect.status} {location} {redirect.body[:300]!r}")
    browser.close()
    client = Http(port)
    res = client.request("POST", "/oauth/token", urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
        "client_id": client_id, "client_secret": client_secret, "code_verifier": verifier}),
        {"Content-Type": "application/x-www-form-urlencoded"})
    client.close()
    if res.status != 200:
        raise ApiError(f"token: {res.status} {res.body[:300]!r}")
    return res.json()


def parallel(items, fn, workers=4):
    """fn(item) for every item on `workers` threads (each with its own connections); results in order."""
    items = list(items)
    results = [None] * len(items)
    errors = []
    q = queue.Queue()
    for i, item in enumerate(items):
        q.put((i, item))

    def worker():
        while not errors:
            try:
                i, item = q.get_nowait()
            except queue.Empty:
                return
            try:
                results[i] = fn(item)
            except Exception as e:  # surfaced below
                errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(max(1, min(workers, len(items))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


# --------------------------------------------------------------------------------------------
# wrk
# --------------------------------------------------------------------------------------------

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def parse_wrk(text):
    r = {"raw": text}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    r["rps"] = float(m.group(1)) if m else 0.0
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", text)
    r["requests"] = int(m.group(1)) if m else 0
    r["seconds"] = float(m.group(2)) * UNITS[m.group(3)] / 1000 if m else 0.0
    for pct, value, unit in re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M):
        r[f"p{pct}_ms"] = float(value) * UNITS[unit]
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    r["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    r["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    r["lua"] = {k: int(v) for k, v in re.findall(r"^BENCH (\w+)=(-?\d+)", text, re.M)}
    return r


class Wrk:
    def __init__(self, port, data_dir):
        self.port, self.data_dir = port, data_dir

    def start(self, path, conns, duration, threads=None, script=None, args=(), headers=(), env=None):
        # Two wrk threads even on one core: measured ~1.7x the ceiling of one thread here.
        threads = threads or min(2, conns)
        cmd = ["taskset", "-c", CLIENT_CPU, "wrk", "-t", str(threads), "-c", str(conns),
               "-d", f"{duration}s", "--latency", "--timeout", "30s"]
        for h in headers:
            cmd += ["-H", h]
        if script:
            cmd += ["-s", os.path.join(LUA_DIR, script)]
        cmd.append(f"http://127.0.0.1:{self.port}{path}")
        if args:
            cmd += ["--", *[str(a) for a in args]]
        e = dict(os.environ, BENCH_LUA_DIR=LUA_DIR, BENCH_THREADS=str(threads), **(env or {}))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e)
        proc.bench_cmd = cmd
        return proc

    @staticmethod
    def finish(proc):
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"wrk failed ({proc.returncode}): {' '.join(proc.bench_cmd)}\n{out}")
        r = parse_wrk(out)
        r["cmd"] = re.sub(r"Bearer \S+", "Bearer <token>", " ".join(proc.bench_cmd))
        return r

    def run(self, *a, **kw):
        return self.finish(self.start(*a, **kw))

    def data_file(self, name, lines):
        path = os.path.join(self.data_dir, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path


# --------------------------------------------------------------------------------------------
# The server process and its database
# --------------------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Database:
    """A fresh SQLite file in the work dir, or a fresh database on a PostgreSQL server."""

    def __init__(self, workdir, postgres_url=None, pods=1):
        self.postgres_url = postgres_url
        self.pods = []  # (name, database, url) of the pods beside the home database
        if postgres_url:
            if not shutil.which("psql"):
                sys.exit("--postgres needs psql (apt-get install postgresql-client)")
            self.name = f"merchantd_bench_{int(time.time())}_{os.getpid()}"
            self.psql(f'CREATE DATABASE "{self.name}"')
            u = urllib.parse.urlparse(postgres_url)
            self.url = urllib.parse.urlunparse(u._replace(path="/" + self.name))
            self.backend = "postgres"
            for k in range(1, pods):
                name = f"{self.name}_pod{k}"
                self.psql(f'CREATE DATABASE "{name}"')
                self.pods.append((f"p{k}", name, urllib.parse.urlunparse(u._replace(path="/" + name))))
        elif pods > 1:
            sys.exit("--pods needs --postgres")
        else:
            self.url = f"sqlite://{os.path.join(workdir, 'bench.db')}"
            self.backend = "sqlite"

    def psql(self, sql, url=None):
        subprocess.run(["psql", url or self.postgres_url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql],
                       check=True, stdout=subprocess.DEVNULL)

    def pods_setting(self):
        """`pods` as merchantd reads it."""
        return ",".join(f"{name}={url}" for name, _, url in self.pods)

    def drop(self):
        if self.postgres_url:
            for name in [self.name] + [db for _, db, _ in self.pods]:
                try:
                    self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                except subprocess.CalledProcessError:
                    log(f"could not drop database {name}; drop it by hand")


class Server:
    def __init__(self, binary, workdir, port):
        self.binary, self.workdir, self.port = binary, workdir, port
        self.proc = None
        self.log_path = os.path.join(workdir, "server.log")

    def start(self, config_path):
        logf = open(self.log_path, "a")
        logf.write(f"\n==== start {time.ctime()} {config_path}\n")
        logf.flush()
        self.proc = subprocess.Popen(
            ["taskset", "-c", SERVER_CPU, self.binary, "serve", "--config", config_path],
            stdout=logf, stderr=subprocess.STDOUT, cwd=self.workdir)
        logf.close()
        deadline = time.time() + 300
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"merchantd exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                c = Http(self.port)
                if c.request("GET", "/health/live").status == 200:
                    c.close()
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("merchantd did not become live in 300 s\n" + self.log_tail())

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid

    def cpu_seconds(self):
        """CPU time the server has used, all threads, user and system. Time another guest of
        the host steals from CPU 0 is not in it, so CPU per request stays comparable between
        runs whose rates the machine's noise moved apart."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_bytes(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def log_tail(self, n=40):
        try:
            with open(self.log_path) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


# --------------------------------------------------------------------------------------------
# Tenants, tokens and seed data
# --------------------------------------------------------------------------------------------

class Merchant:
    def __init__(self, key, stores=("main",)):
        self.key, self.store_keys = key, list(stores)
        self.email = f"owner@{key}.test"
        self.password = f"bench-password-{key}"
        self.client_id = f"bench-{key}"
        self.client_secret = f"bench-secret-{key}-0123456789"
        self.id = None
        self.stores = {}
        self.token = None
        self.refresh = None
        self.products = []   # product ids
        self.categories = []  # category ids
        self.sales = None     # a [sales] table (the sale scenario's two added rates)

    def manifest(self):
        lines = ["[merchant]", f'key = "{self.key}"', f'name = "Bench {self.key}"', ""]
        if self.sales:
            lines += ["[sales]", self.sales, ""]
        for s in self.store_keys:
            lines += ["[[stores]]", f'key = "{s}"', f'name = "Store {s}"', ""]
        lines += ["[[users]]", f'email = "{self.email}"', f'password = "{self.password}"',
                  'role = "owner"', "",
                  "[[applications]]", f'name = "Bench POS {self.key}"',
                  f'client_id = "{self.client_id}"', f'client_secret = "{self.client_secret}"',
                  f'redirect_uris = ["{REDIRECT}"]', ""]
        return "\n".join(lines)

    def login(self, port):
        answer = oauth_login(port, self.client_id, self.client_secret, self.email, self.password)
        self.token, self.refresh = answer["access_token"], answer["refresh_token"]
        return answer

    def api(self, port):
        return Http(port, self.token)


def product_object(i, categories):
    obj = {"name": f"Product {i:06d}", "barcode": str(2_000_000_000_000 + i), "tags": "bench,load",
           "instances": {"i": {"name": "Standard", "price": str(100 + (i * 37) % 900),
                               "taxPercentage": "0.200"}}}
    if categories:
        obj["categories"] = [categories[i % len(categories)]]
    return obj


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        p = dict(PROFILES["quick" if args.quick else "full"])
        for key in ("runs", "duration", "products", "merchants", "idle_secs", "report_sales"):
            if getattr(args, key) is not None:
                p[key] = getattr(args, key)
        if args.history:
            p["history"] = [int(x) for x in args.history.split(",")]
        p["history"] = sorted(set(p["history"]))
        self.p = p
        self.only = self.selected(args.only)
        self.workdir = tempfile.mkdtemp(prefix="merchantd-bench-")
        self.data_dir = os.path.join(self.workdir, "data")
        os.makedirs(self.data_dir)
        self.port = free_port()
        self.server = Server(args.binary, self.workdir, self.port)
        self.wrk = Wrk(self.port, self.data_dir)
        self.db = None
        self.results = {}   # scenario -> list of per-round dicts (or dict)
        self.notes = []
        self.history = 0    # completed baskets of the main merchant so far

    # ---- selection ----------------------------------------------------------------------
    def selected(self, only):
        if not only:
            return set(SCENARIOS)
        chosen = set()
        for item in only.split(","):
            item = item.strip().lower()
            name = ALIASES.get(item, item)
            if name not in SCENARIOS:
                sys.exit(f"unknown scenario {item!r}; known: "
                         + ", ".join(f"{k} ({v})" for k, v in SCENARIOS.items()))
            chosen.add(name)
        if chosen & {"read", "write", "store", "refresh", "basket", "multi", "mix", "calculate", "sale"}:
            chosen.add("ceiling")
        if chosen & {"mix", "multi"}:
            chosen.add("read")
        return chosen

    def want(self, *names):
        return any(n in self.only for n in names)

    # ---- setup --------------------------------------------------------------------------
    def config(self, name, idle_secs, port=None):
        path = os.path.join(self.workdir, name)
        serve_tenants = os.path.join(self.workdir, "serve-tenants")  # empty: manifests applied by CLI
        os.makedirs(serve_tenants, exist_ok=True)
        with open(path, "w") as f:
            f.write("\n".join([
                "# written by benches/load/load.py",
                f'bind = "127.0.0.1:{port or self.port}"',
                f'database_url = "{self.db.url}"',
                f'pods = "{self.db.pods_setting()}"',
                f'tenants = "{serve_tenants}"',
                'log_level = "warn"',
                "workers = 1",
                f"pbkdf2_iterations = {PBKDF2_ITERATIONS}",
                "oauth_requests_per_minute = 1000000000",
                "oauth_failed_auths_per_minute = 1000000000",
                "api_requests_per_second_per_token = 0",  # the load is one client's flood
                "api_requests_per_second_per_merchant = 0",
                f"merchant_idle_secs = {idle_secs}",
                "access_token_ttl_secs = 172800",
                # Scenario j moves the writes' clock through a year (a test hook route).
                f"test_hooks = {'true' if self.want('salesreport') else 'false'}",
                "",
            ]))
        return path

    def prepare(self):
        self.db = Database(self.workdir, self.args.postgres, self.args.pods)
        self.main = Merchant("main")
        self.writer = Merchant("writes")
        self.shop = Merchant("shop", ("sale",))
        if "sale" in self.only:
            self.shop.sales = ('taxes = [{ code = "A", rate = "0.05", included = false }, '
                               '{ code = "B", rate = "0.07", included = false }]')
        self.tiny = Merchant("tiny")
        self.merchants = [self.main, self.writer, self.shop, self.tiny]
        self.multi = []
        if self.want("multi", "idle"):
            self.multi = [Merchant(f"m{i:04d}") for i in range(self.p["merchants"])]
        # Seeding runs (scenario 8): the big merchants we need anyway, plus scratch ones.
        self.seed_targets = [self.main]
        if self.want("write"):
            self.seed_targets.append(self.writer)
        if self.want("basket"):
            self.seed_targets.append(self.shop)
        self.scratch = []
        if self.want("seed"):
            while len(self.seed_targets) < self.p["runs"]:
                m = Merchant(f"scratch{len(self.scratch) + 1}")
                self.scratch.append(m)
                self.seed_targets.append(m)
        everyone = self.merchants + self.scratch + self.multi
        tenants_dir = os.path.join(self.workdir, "tenants")
        os.makedirs(tenants_dir)
        files = []
        for m in everyone:
            path = os.path.join(tenants_dir, f"{m.key}.toml")
            with open(path, "w") as f:
                f.write(m.manifest())
            files.append(path)
        self.config_main = self.config("merchantd.toml", 86400)
        log(f"tenant apply: {len(files)} manifests (pbkdf2_iterations = {PBKDF2_ITERATIONS}, lowered "
            "by the bench so provisioning many users is fast)")
        out = subprocess.run([self.args.binary, "tenant", "apply", *files, "--config", self.config_main,
                              "--database-url", self.db.url],
                             check=True, capture_output=True, text=True, cwd=self.workdir)
        applied = {t["key"]: t for t in json.loads(out.stdout)}
        for m in everyone:
            m.id = applied[m.key]["id"]
            m.stores = applied[m.key]["stores"]

    def login(self, merchants):
        parallel(merchants, lambda m: m.login(self.port), workers=4)

    # ---- seeding ------------------------------------------------------------------------
    def make_categories(self, m, n):
        c = m.api(self.port)
        got = c.write("POST", "/category", "categories",
                      {f"c{i}": {"title": f"Category {i}"} for i in range(n)})
        m.categories = [got[f"c{i}"]["id"] for i in range(n)]
        c.close()

    def seed_products(self, m, count, clients=4):
        """POST /product in batches of 200 from `clients` concurrent connections; returns products/s
        and each batch's own time (its median and p99: a stall shows as a p99 far above it)."""
        bodies = []
        for start in range(0, count, BATCH):
            objs = {f"p{i}": product_object(i, m.categories) for i in range(start, min(count, start + BATCH))}
            bodies.append(json.dumps({"products": objs}, separators=(",", ":")).encode())
        conns = [m.api(self.port) for _ in range(clients)]
        for c in conns:  # open the connections before the clock starts
            c.api("GET", "/health/live")
        answers = [None] * len(bodies)
        took = [None] * len(bodies)
        work = queue.Queue()
        for i in range(len(bodies)):
            work.put(i)
        failures = []

        def client(c):
            while True:
                try:
                    i = work.get_nowait()
                except queue.Empty:
                    return
                try:
                    t = time.perf_counter()
                    answers[i] = c.api("POST", "/product", bodies[i], {"Content-Type": "application/json"},
                                       expect=(201,)).body
                    took[i] = (time.perf_counter() - t) * 1000
                except Exception as e:
                    failures.append(e)
                    return

        t0 = time.perf_counter()
        threads = [threading.Thread(target=client, args=(c,)) for c in conns]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        for c in conns:
            c.close()
        if failures:
            raise failures[0]
        errors = 0
        for raw in answers:
            body = json.loads(raw)
            errors += len(body.get("api", {}).get("message", {}).get("error") or {})
            m.products.extend(rec["id"] for rec in body["products"].values())
        ordered = sorted(took)
        return {"products": count, "seconds": elapsed, "per_sec": count / elapsed,
                "clients": clients, "errors": errors, "batch_ms": took,
                "batch_p50_ms": median(took),
                "batch_p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else None}

    def seed_history(self, target, clients=4):
        """Completed one-line sale baskets (basket, CARD payment, completion) at main's store."""
        need = target - self.history
        if need <= 0:
            return None
        store = self.main.stores["main"]
        sizes = [BATCH] * (need // BATCH) + ([need % BATCH] if need % BATCH else [])
        rng = random.Random(target)

        def batch(n):
            c = self.local_client(self.main)
            lines = {f"b{i}": {"storeId": store, "basketProducts": {
                "l": {"productId": rng.choice(self.main.products), "quantity": 1 + i % 3}}} for i in range(n)}
            baskets = c.write("POST", "/basket", "baskets", lines)
            c.write("POST", "/transaction", "transactions", {
                f"t{k[1:]}": {"basketId": b["id"], "type": "CARD",
                              "amount": int(Decimal(b["total"]).to_integral_value(ROUND_CEILING)),
                              "completed": True}
                for k, b in baskets.items()})
            c.write("POST", "/basket", "baskets", {
                f"d{k[1:]}": {"id": b["id"], "completed": True} for k, b in baskets.items()})
            return n

        t0 = time.perf_counter()
        parallel(sizes, batch, workers=clients)
        elapsed = time.perf_counter() - t0
        self.history = target
        if self.db.postgres_url:
            # A year of trading is seeded here in seconds; in that year autovacuum would have
            # cleared the dead index entries the completions left (migration 0013 tunes it).
            # Vacuum now, outside the timed seeding, so the ladder measures that steady state.
            self.db.psql("VACUUM (ANALYZE)", url=self.db.url)
        return {"baskets": need, "seconds": elapsed, "per_sec": need / elapsed}

    _local = threading.local()

    def local_client(self, m, port=None):
        """One keep-alive API connection per thread, port and merchant."""
        port = port or self.port
        cache = getattr(self._local, "clients", None)
        if cache is None:
            cache = self._local.clients = {}
        if (port, m.key) not in cache:
            cache[(port, m.key)] = m.api(port)
        return cache[(port, m.key)]

    # ---- data files for wrk -------------------------------------------------------------
    def ids_file(self, name, merchants):
        return self.wrk.data_file(name, [f"{m.token}\t{','.join(map(str, m.products))}" for m in merchants])

    # ---- scenarios ----------------------------------------------------------------------
    def record(self, name, value):
        self.results.setdefault(name, []).append(value)

    def costed(self, run):
        """A wrk run with the server's CPU time per request (`cpu_us`): all it spent from wrk's
        start to its end (`cpu_window_s` of wall time, wrk's set-up included), background work
        such as passivating merchants included."""
        before, started = self.server.cpu_seconds(), time.monotonic()
        res = run()
        res["cpu_window_s"] = time.monotonic() - started
        res["cpu_s"] = self.server.cpu_seconds() - before
        res["cpu_us"] = res["cpu_s"] * 1e6 / max(1, res["requests"])
        return res

    @staticmethod
    def versus_one(res, read):
        """Scenario c against one merchant: by rate (`vs_one`, the acceptance's figure) and by
        server CPU a request (`cpu_vs_one`: one merchant's CPU a request over this one's, the
        rate ratio a server alone on its core would show)."""
        res["vs_one"] = res["rps"] / read["rps"] if read["rps"] else None
        res["cpu_vs_one"] = read["cpu_us"] / res["cpu_us"] if res["cpu_us"] else None

    def run_round(self, r):
        d, p = self.p["duration"], self.port
        log(f"round {r + 1}/{self.p['runs']}")
        ceiling = read = None
        if self.want("ceiling"):
            res = self.wrk.run("/health/live", 64, d)
            ceiling = res["rps"]
            self.record("ceiling", res)
            log(f"  ceiling {ceiling:,.0f} rps")

        def ratio(x):
            return x / ceiling if ceiling else None

        if self.want("read"):
            self.perf_start("read", d)
            res = self.costed(lambda: self.wrk.run("/product", 64, d, script="products.lua",
                                                   args=(self.f_main, 10, "-")))
            self.perf_wait()
            res["ratio"] = ratio(res["rps"])
            read = res
            self.record("read", res)
            log(f"  read (10 ids) {res['rps']:,.0f} rps, p99 {res.get('p99_ms', 0):.2f} ms, "
                f"{res['cpu_us']:.1f} µs server CPU a request ({res['cpu_s']:.1f} s in {res['cpu_window_s']:.1f} s)")
        if self.want("store"):
            res = self.wrk.run("/product", 64, d, script="products.lua",
                               args=(self.f_main, 10, self.main.stores["main"]))
            res["ratio"] = ratio(res["rps"])
            self.record("store", res)
            log(f"  read with storeId {res['rps']:,.0f} rps")
        if self.want("write"):
            self.perf_start("write", d)
            res = self.wrk.run("/category", 64, d, script="write.lua", args=(self.f_writer, "category-create", 0))
            self.perf_wait()
            res["ratio"] = ratio(res["rps"])
            res["errors"] = res["lua"].get("non201", 0) + res["socket_errors"]
            self.record("write", res)
            log(f"  POST /category {res['rps']:,.0f} rps, non-201 {res['lua'].get('non201')}")
        if self.want("list"):
            res = self.wrk.run("/product", 1, d, headers=(f"Authorization: Bearer {self.main.token}",
                                                          "x-accept-version: 2.0"))
            self.record("list", res)
            log(f"  GET /product (all) 1 conn p50 {res.get('p50_ms', 0):.1f} ms")
        if self.want("mix") and read:
            self.scenario_mix(read, d)
        if self.want("multi") and read:
            # Twice at once: the first window wakes the merchants passivated since seeding (it
            # took longer than merchant_idle_secs), the second is the steady state of random
            # requests, where each merchant is asked often enough to stay awake.
            for name, label, profiled in (("multi", "", True), ("multi_awake", ", awake", False)):
                if profiled:
                    self.perf_start(name, d)
                res = self.costed(lambda: self.wrk.run("/product", 64, d, script="products.lua",
                                                       args=(self.f_multi, 10, "-")))
                if profiled:
                    self.perf_wait()
                res["ratio"] = ratio(res["rps"])
                self.versus_one(res, read)
                self.record(name, res)
                log(f"  {len(self.multi)} merchants{label}: {res['rps']:,.0f} rps ({res['vs_one']:.2f}x one "
                    f"merchant; {res['cpu_us']:.1f} µs server CPU a request ({res['cpu_s']:.1f} s in "
                    f"{res['cpu_window_s']:.1f} s), {res['cpu_vs_one']:.2f}x one merchant's rate by CPU)")
        if self.want("refresh"):
            self.scenario_refresh(d, ratio)
        if self.want("basket"):
            self.scenario_basket(d, ratio)
        if self.want("calculate"):
            self.scenario_calculate(d, ratio)
        if self.want("sale"):
            self.scenario_basket(d, ratio, kind="sale")
        if self.want("customers"):
            self.scenario_customers()
        if self.want("sync"):
            self.scenario_sync(r)

    def scenario_mix(self, read, d):
        """90 % reads / 10 % writes on the main merchant: two wrk processes at once, the writers
        (PUT /category, one object) throttled with wrk's delay() to 1/9 of the read rate. Short
        calibration passes measure the read rate and write latency under the mix first."""
        writers = 16

        def delay_for(read_rps, write_ms):
            target = max(1.0, read_rps / 9)
            return max(0, int(writers * 1000 / target - write_ms))

        def both(seconds, delay_ms):
            rp = self.wrk.start("/product", 64, seconds, script="products.lua", args=(self.f_main, 10, "-"))
            wp = self.wrk.start("/category", writers, seconds, script="write.lua",
                                args=(self.f_main_update, "category-update", delay_ms), env={"BENCH_DELAY": "1"})
            return Wrk.finish(rp), Wrk.finish(wp)

        # Each writer connection cycles every delay + L ms, L being its request's own time under the
        # mix; the delay is set for writes = reads / 9. Reads slow down as writes rise, hence a few
        # passes; when even no delay is too little, more writer connections (up to 64).
        delay_ms = delay_for(read["rps"] * 0.9, 0)
        calibration = []
        for _ in range(5):
            cr, cw = both(2, delay_ms)
            share = cw["rps"] / (cr["rps"] + cw["rps"]) if cw["rps"] else 0
            calibration.append({"writers": writers, "delay_ms": delay_ms, "reads_rps": cr["rps"],
                                "writes_rps": cw["rps"], "write_share": share})
            if abs(share - 0.10) <= 0.015 or not cw["rps"]:
                break
            latency_ms = max(0, writers * 1000 / cw["rps"] - delay_ms)
            if delay_ms == 0 and share < 0.085 and writers < 64:
                writers *= 2
            delay_ms = delay_for(cr["rps"], latency_ms)
        self.perf_start("mix", d)
        rres, wres = both(d, delay_ms)
        self.perf_wait()
        total = rres["rps"] + wres["rps"]
        res = {"reads": rres, "writes": wres, "delay_ms": delay_ms, "writers": writers,
               "calibration": calibration,
               "write_share": wres["rps"] / total if total else 0,
               "read_p99_ms": rres.get("p99_ms"), "read_only_p99_ms": read.get("p99_ms"),
               "errors": rres["non2xx"] + rres["socket_errors"] + wres["lua"].get("non201", 0)
               + wres["socket_errors"]}
        res["p99_ratio"] = (res["read_p99_ms"] / res["read_only_p99_ms"]) if res["read_only_p99_ms"] else None
        self.record("mix", res)
        log(f"  mix: reads {rres['rps']:,.0f} rps p99 {res['read_p99_ms']:.2f} ms "
            f"(read-only {res['read_only_p99_ms']:.2f}), writes {wres['rps']:,.0f} rps "
            f"({100 * res['write_share']:.1f} %, {writers} conns, delay {delay_ms} ms)")

    def offline_sale(self, rng, tag, i, now_ms):
        """One offline sale of main for POST /basket/sync: 1 to 3 lines of main's products, paid
        by card, sold within the last hour, its clientId made of `tag` and `i`."""
        products = self.main.products
        lines = {f"l{j}": {"productId": products[rng.randrange(len(products))], "quantity": 1 + j}
                 for j in range(1 + i % 3)}
        return {"clientId": f"00000000-{tag:04d}-4000-8000-{i:012d}",
                "occurredAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z",
                                            time.gmtime((now_ms - rng.randrange(int(os.environ.get("SYNC_SPREAD_MS", "3600000")))) / 1000)),
                "storeId": self.main.stores["main"], "basketProducts": lines,
                "payments": {"p": {"type": "CARD", "amount": 100_000}}}

    def sync_batches(self, c, batches):
        """Sends each batch; the milliseconds each took."""
        took = []
        for batch in batches:
            t = time.perf_counter()
            body = c.api("POST", "/basket/sync", {"sales": batch}, expect=(201,)).json()
            if body["api"]["message"].get("error"):
                raise ApiError(f"sync: per-sale errors {json.dumps(body['api']['message']['error'])[:500]}")
            took.append((time.perf_counter() - t) * 1000)
        return took

    def scenario_sync(self, r, count=10_000):
        """k: POST /basket/sync of `count` offline sales of main in batches of 200, one client
        (issue 24), each with a fresh clientId. Reports sales/s over the whole run and the batch
        p50 and p99; then the first batch again (every sale a repeat) must answer the same
        baskets."""
        rng = random.Random(24 + r)
        now_ms = int(time.time() * 1000)
        batches = [{f"s{i}": self.offline_sale(rng, r, i, now_ms) for i in range(start, min(count, start + BATCH))}
                   for start in range(0, count, BATCH)]
        c = self.main.api(self.port)
        c.api("GET", "/health/live")
        self.perf_start("sync", 5)
        t0 = time.perf_counter()
        took = self.sync_batches(c, batches)
        seconds = time.perf_counter() - t0
        self.perf_wait()
        first = c.api("POST", "/basket/sync", {"sales": batches[0]}, expect=(201,)).json()
        c.close()
        ordered = sorted(took)
        res = {"sales": count, "seconds": seconds, "sales_per_s": count / seconds,
               "batch_p50_ms": median(took), "batch_p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
               "repeat_ok": json.dumps(first["api"]["message"]).count("was already recorded") == len(batches[0])}
        self.synced = getattr(self, "synced", 0) + count
        self.record("sync", res)
        log(f"  sync: {res['sales_per_s']:,.0f} sales/s, batch p50 {res['batch_p50_ms']:.1f} ms, "
            f"p99 {res['batch_p99_ms']:.1f} ms, repeat {'answered' if res['repeat_ok'] else 'NOT answered'}")

    def scenario_digest(self, baskets=200_000, reads=30):
        """l: GET /digest of main's baskets once it holds `baskets` of them (issue 24): the rest
        are seeded through POST /basket/sync (batches of 200, one client); then `reads` digests
        at two bucket sizes, one at a time: p50 and p99."""
        c = self.main.api(self.port)
        have = c.api("GET", "/digest", headers={"resource": "basket", "bucketSize": "1000000"}).json()
        have = have["digest"]["total"]["count"]
        if have < baskets:
            rng = random.Random(2400)
            now_ms = int(time.time() * 1000)
            t0 = time.perf_counter()
            todo = baskets - have
            for start in range(0, todo, 20 * BATCH):
                chunk = [{f"s{i}": self.offline_sale(rng, 9000, have + i, now_ms)
                          for i in range(s0, min(todo, s0 + BATCH))} for s0 in range(start, min(todo, start + 20 * BATCH), BATCH)]
                self.sync_batches(c, chunk)
            log(f"  seeded {todo:,} offline sales in {time.perf_counter() - t0:.1f} s")
        res = {"baskets": baskets}
        # The first digest after the seeding. The digest read above made the server follow this
        # merchant's log in the background (services/digests.rs), so it pays only for what the
        # follower has not yet taken in; a merchant whose digests were never read pays for its
        # whole log once (3.7 s here before the follower).
        t = time.perf_counter()
        c.api("GET", "/digest", headers={"resource": "basket", "bucketSize": "1000000"}).json()
        res["first_ms"] = (time.perf_counter() - t) * 1000
        log(f"  first digest after seeding: {res['first_ms']:.1f} ms")
        for size in ("10000", "1000000"):
            took = []
            for _ in range(reads):
                t = time.perf_counter()
                body = c.api("GET", "/digest", headers={"resource": "basket", "bucketSize": size}).json()
                took.append((time.perf_counter() - t) * 1000)
            ordered = sorted(took)
            res[size] = {"p50_ms": median(took), "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
                         "buckets": len(body["digest"]["buckets"]), "count": body["digest"]["total"]["count"]}
            log(f"  digest of {res[size]['count']:,} baskets by {size}: p50 {res[size]['p50_ms']:.1f} ms, "
                f"p99 {res[size]['p99_ms']:.1f} ms ({res[size]['buckets']} buckets)")
        c.close()
        self.record("digest", res)

    def scenario_customers(self, count=100_000, searches=100):
        """i: GET /customer with `search` among `count` customers of main (issue 23), seeded once
        (batches of 200, one client); then, from one client, one request at a time, `searches`
        searches of each kind: a surname's first 5 letters, an email's first 10 characters and a
        phone's first 10 digits. Reports each kind's latency (p50, p99) and its median hits."""
        first = ["ann", "bob", "cai", "dee", "eli", "fay", "gus", "hal", "ivy", "jon", "kim", "lea", "max",
                 "ned", "ola", "pia", "quin", "rae", "sam", "tia", "uma", "vic", "wes", "xia", "yan", "zoe",
                 "amir", "bea", "carl", "dora", "emil", "fred", "gina", "hugo", "ines", "jack", "kara", "liam",
                 "mona", "nils"]
        syllables = ["ka", "lo", "mi", "ren", "sto", "vel", "dor", "an", "ti", "bek"]
        surnames = [a + b + c + d for a in syllables for b in syllables for c in syllables
                    for d in ("son", "ski", "er", "ley", "ov")][:count // len(first) + 1]

        def customer(i):
            f, s = first[i % len(first)], surnames[i // len(first)]
            return {"name": f"{f.title()} {s.title()}", "email": f"{f}.{s}{i}@example.test",
                    "phone": f"+44 7{i:09d}"}

        if not getattr(self, "customers_seeded", False):
            c = self.main.api(self.port)
            t0 = time.perf_counter()
            for start in range(0, count, BATCH):
                c.write("POST", "/customer", "customers",
                        {f"c{i}": customer(i) for i in range(start, min(count, start + BATCH))})
            log(f"  seeded {count:,} customers in {time.perf_counter() - t0:.1f} s")
            c.close()
            self.customers_seeded = True
        rng = random.Random(23)
        picks = [customer(rng.randrange(count)) for _ in range(searches)]
        kinds = {
            "surname": [p["name"].split()[1][:5] for p in picks],
            "email": [p["email"][:10] for p in picks],
            "phone": [p["phone"].replace(" ", "")[:10] for p in picks],
        }
        c = self.main.api(self.port)
        c.api("GET", "/health/live")
        res = {"customers": count}
        for kind, texts in kinds.items():
            took, hits = [], []
            for text in texts:
                t = time.perf_counter()
                body = c.api("GET", "/customer", headers={"search": text}).json()
                took.append((time.perf_counter() - t) * 1000)
                hits.append(len(body["customers"]))
            ordered = sorted(took)
            res[kind] = {"p50_ms": median(took), "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
                         "hits": median(hits)}
            log(f"  customer search by {kind}: p50 {res[kind]['p50_ms']:.2f} ms, p99 {res[kind]['p99_ms']:.2f} ms, "
                f"{res[kind]['hits']:.0f} hits")
        c.close()
        self.record("customers", res)

    def scenario_sales_report(self, total, days=365):
        """j: GET /report/sales over a year of `total` completed sales of main (issue 23). The
        sales are completed through the API in batches of 200 (4 clients) at 3 registers by 4
        employees, paid in cash or by card, with the writes' clock moved back through the year
        (`test_hooks`: POST /__test/write-clock/{offset}) at four hours of each day. After a
        quarter and after the year, one client times 20 of each report: the last 30 days by day
        and store (the same rows both times: cost must not grow with history), the year by day
        and store, register, employee and payment type, the last 30 days by product, one day by
        hour and register."""
        c = self.main.api(self.port)
        store = self.main.stores["main"]
        registers = [r["id"] for r in c.write("POST", "/register", "registers", {
            f"r{i}": {"storeId": store, "name": f"Till {i}"} for i in range(3)}).values()]
        c.write("POST", "/register/session", "sessions", {
            f"s{i}": {"registerId": r, "openingFloat": 10_000} for i, r in enumerate(registers)})
        staff = [e["id"] for e in c.write("POST", "/employee", "employees", {
            f"e{i}": {"firstName": "Clerk", "lastName": str(i), "email": f"clerk{i}@bench.test",
                      "roleId": 3} for i in range(4)}).values()]
        day_ms, hour_ms = 86_400_000, 3_600_000
        # Whole local (UTC) days: day 0 of the year is `days` days before today.
        today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        start = today - timedelta(days=days)
        rng = random.Random(365)

        def batch(n):
            cl = self.local_client(self.main)
            picks = [(rng.choice(self.main.products), rng.choice(registers), rng.choice(staff)) for _ in range(n)]
            baskets = cl.write("POST", "/basket", "baskets", {
                f"b{i}": {"storeId": store, "registerId": r, "employeeId": e,
                          "basketProducts": {"l": {"productId": p, "quantity": 1 + i % 3}}}
                for i, (p, r, e) in enumerate(picks)})
            cl.write("POST", "/transaction", "transactions", {
                f"t{k[1:]}": {"basketId": b["id"], "type": "CARD" if int(k[1:]) % 3 else "CASH",
                              "amount": b["receipt"]["total"], "completed": True}
                for k, b in baskets.items()})
            cl.write("POST", "/basket", "baskets", {
                f"d{k[1:]}": {"id": b["id"], "completed": True} for k, b in baskets.items()})
            return n

        def report(name, frm, to, **headers):
            took = []
            for _ in range(20):
                t = time.perf_counter()
                body = c.api("GET", "/report/sales", headers={"reportFrom": frm, "reportTo": to, **headers}).json()
                took.append((time.perf_counter() - t) * 1000)
            rows = sum(len(v) for v in body["salesReport"]["buckets"].values())
            ordered = sorted(took)
            return {"name": name, "p50_ms": median(took), "p99_ms": ordered[-1], "cells": rows}

        def measure(seeded_days):
            last = (start + timedelta(days=seeded_days)).strftime("%Y-%m-%d")
            month = (start + timedelta(days=seeded_days - 30)).strftime("%Y-%m-%d")
            year = start.strftime("%Y-%m-%d")
            one = (start + timedelta(days=seeded_days - 1)).strftime("%Y-%m-%d")
            out = [report("30 days x store", month, last)]
            if seeded_days == days:
                out += [report("year x store", year, last),
                        report("year x register", year, last, groupBy="register"),
                        report("year x employee", year, last, groupBy="employee"),
                        report("year x payment type", year, last, groupBy="paymentType"),
                        report("30 days x product", month, last, groupBy="product"),
                        report("1 day x hour x register", one, last, period="hour", groupBy="register")]
            for r in out:
                log(f"  /report/sales {r['name']} after {seeded_days} days: p50 {r['p50_ms']:.2f} ms, "
                    f"p99 {r['p99_ms']:.2f} ms, {r['cells']} cells")
            return out

        per_slot = total // (days * 4)
        sizes = [BATCH] * (per_slot // BATCH) + ([per_slot % BATCH] if per_slot % BATCH else [])
        res = {"sales": per_slot * days * 4, "days": days, "steps": []}
        t0 = time.perf_counter()
        for d in range(days):
            for hour in (9, 12, 15, 18):
                at = start + timedelta(days=d, hours=hour)
                offset = int((at - datetime.now(timezone.utc)).total_seconds() * 1000)
                c.api("POST", f"/__test/write-clock/{offset}")
                parallel(sizes, batch, workers=4)
            if d + 1 in (days // 4, days):
                seeded = time.perf_counter() - t0
                log(f"  seeded {d + 1} days ({per_slot * 4 * (d + 1):,} sales) in {seeded:.0f} s")
                res["steps"].append({"days": d + 1, "seed_s": seeded, "reports": measure(d + 1)})
        c.api("POST", "/__test/write-clock/0")
        c.close()
        self.record("salesreport", res)

    def scenario_refresh(self, d, ratio):
        conns, families = 64, 96
        tokens = parallel(range(families), lambda _: oauth_login(
            self.port, self.main.client_id, self.main.client_secret, self.main.email,
            self.main.password)["refresh_token"], workers=4)
        path = self.wrk.data_file("refresh.txt", tokens)
        self.perf_start("refresh", d)
        res = self.wrk.run("/oauth/token", conns, d, script="refresh.lua",
                           args=(path, self.main.client_id, self.main.client_secret))
        self.perf_wait()
        res["ratio"] = ratio(res["rps"])
        res["errors"] = res["lua"].get("failed", 0) + res["lua"].get("starved", 0) + res["socket_errors"]
        self.record("refresh", res)
        log(f"  refresh {res['rps']:,.0f} grants/s, failed {res['lua'].get('failed')}")

    def scenario_calculate(self, d, ratio):
        """g: POST /basket/calculate of a 20-line basket of main's products (nothing written)."""
        lines = {f"l{i}": {"productId": p, "quantity": 1 + i % 3} for i, p in enumerate(self.main.products[:20])}
        body = json.dumps({"baskets": {"k": {"storeId": self.main.stores["main"], "basketProducts": lines}}},
                          separators=(",", ":"))
        path = self.wrk.data_file("calculate.txt", [self.main.token, body])
        self.perf_start("calculate", d)
        res = self.wrk.run("/basket/calculate", 64, d, script="calculate.lua", args=(path,))
        self.perf_wait()
        res["ratio"] = ratio(res["rps"])
        res["errors"] = res["lua"].get("non200", 0) + res["socket_errors"]
        self.record("calculate", res)
        log(f"  calculate (20 lines) {res['rps']:,.0f} rps, non-200 {res['lua'].get('non200')}")

    def sale_product(self):
        """The sale scenario's product: two rates added on (A 5 %, B 7 %) and two automatic
        promotions on it (10 % off, and 5 % off that stacks)."""
        if getattr(self, "_sale_product", None):
            return self._sale_product
        c = self.shop.api(self.port)
        p = c.write("POST", "/product", "products", {"p": {"name": "Taxed latte", "instances": {"i": {
            "price": "300", "taxPercentage": "0", "taxCodes": ["A", "B"]}}}})["p"]["id"]
        c.write("POST", "/promotion", "promotions", {
            "ten": {"title": "Ten off", "type": "percentage", "x": "10", "productIds": [p],
                    "startDate": "2020-01-01 00:00:00", "automatic": True},
            "five": {"title": "Five more", "type": "percentage", "x": "5", "productIds": [p],
                     "startDate": "2020-01-01 00:00:00", "automatic": True, "stackable": True}})
        c.close()
        self._sale_product = p
        return p

    def scenario_basket(self, d, ratio, kind="basket"):
        store = self.shop.stores["sale"]
        product = self.sale_product() if kind == "sale" else self.shop.products[0]
        path = self.wrk.data_file(f"{kind}.txt", [f"{self.shop.token}\t{store}\t{product}"])
        self.perf_start(kind, d)
        res = self.wrk.run("/basket", 64, d, threads=64, script="basket.lua", args=(path,))
        self.perf_wait()
        res["ratio"] = ratio(res["rps"])
        # Stock exact: stockSold of the product at that store equals the units of every completed
        # basket at that store (the only baskets there are this scenario's). Requests still in
        # flight when wrk stopped are let finish first; the stock is read before and after the
        # basket list and must not move in between.
        time.sleep(1)
        c = self.shop.api(self.port)

        def stock_sold():
            got = c.api("GET", "/product", headers={"productIds": str(product), "storeId": str(store)}).json()
            return got["products"][str(product)]["stockSold"]

        sold_before = stock_sold()
        baskets = c.api("GET", "/basket", headers={"storeIds": str(store), "completed": "true"}).json()["baskets"]
        sold = stock_sold()
        c.close()
        if sold != sold_before:
            self.notes.append(f"basket: stock moved during the check ({sold_before} -> {sold})")
        units = sum(line["quantity"] for b in baskets.values() for line in b["basketProducts"].values()
                    if line["productId"] == product)
        # Both kinds sell at this store: the check counts every completion so far.
        counted = sum(r["lua"].get("completed", 0)
                      for k in ("basket", "sale") for r in self.results.get(k, [])) \
            + res["lua"].get("completed", 0)
        res["stock"] = {"stockSold": sold, "units_in_completed_baskets": units,
                        "completed_baskets": len(baskets), "completions_seen_by_wrk": counted,
                        "exact": float(sold) == float(units)}
        res["errors"] = res["lua"].get("errors", 0) + res["socket_errors"] + (0 if res["stock"]["exact"] else 1)
        self.record(kind, res)
        log(f"  {kind} {res['rps']:,.0f} req/s, {res['lua'].get('completed')} completed, "
            f"errors {res['lua'].get('errors')}, stockSold {sold} vs {units} units "
            f"({'exact' if res['stock']['exact'] else 'NOT EXACT'})")

    def ladder(self):
        """Scenarios 5, 6, 7: write latency, cold activation and memory as history grows."""
        budget = self.args.history_budget_min * 60
        last_rate = last_mid = None
        for h in self.p["history"]:
            if h > self.history and last_rate:
                # Seeding may get slower as history grows (each write costing O(history)): assume
                # the cost per basket grows linearly from the last step's average.
                a, b = self.history, h
                estimate = max((b - a) / last_rate,
                               (b * b - a * a) / (2 * max(1, last_mid) * last_rate))
                if estimate > budget:
                    note = (f"history ladder stopped before {h:,} baskets: seeding would take "
                            f"~{estimate / 60:.0f} min at {last_rate:,.0f} baskets/s "
                            f"(budget {self.args.history_budget_min} min, --history-budget-min)")
                    self.notes.append(note)
                    log(note)
                    break
            start = self.history
            seeded = self.seed_history(h)
            if seeded:
                last_rate, last_mid = seeded["per_sec"], (start + h) / 2
                self.record("history_seed", dict(seeded, history=h))
                log(f"history {h:,}: seeded {seeded['baskets']:,} baskets in {seeded['seconds']:.1f} s "
                    f"({seeded['per_sec']:,.0f}/s)")
            step = {"history": h, "runs": [], "rss_running": self.server.rss_bytes()}
            for r in range(self.p["runs"]):
                run = {}
                # On the server that made the history (as a long-running one would).
                if self.want("history"):
                    for kind, path, data, mode in (("write", "/category", self.f_main_update, "category-update"),
                                                   ("basket_write", "/basket", self.f_main_open, "basket-note")):
                        res = self.wrk.run(path, 1, self.p["duration"], script="write.lua", args=(data, mode, 0))
                        res["errors"] = res["lua"].get("non201", 0) + res["socket_errors"]
                        run[kind] = res
                # On a fresh process on the same database (see `probe`).
                if self.want("cold", "memory"):
                    run.update(self.cold_start())
                step["runs"].append(run)
                log(f"  history {h:,} run {r + 1}: " + ", ".join(
                    f"{k} {v:.1f} ms" for k, v in [
                        ("category write p50", run.get("write", {}).get("p50_ms")),
                        ("basket write p50", run.get("basket_write", {}).get("p50_ms")),
                        ("cold first request", run.get("first_ms")), ("second", run.get("second_ms"))]
                    if v is not None)
                    + (f", RSS {run['rss_base'] / 2**20:.1f} -> {run['rss_main'] / 2**20:.1f} MiB"
                       if "rss_main" in run else ""))
            self.record("ladder", step)

    @contextlib.contextmanager
    def probe(self, idle_secs=86400):
        """A fresh merchantd on its own port and the same database. On PostgreSQL the main one
        keeps running beside it; SQLite serves one process (a second `serve` refuses to start),
        so there the main one is stopped first and started again afterwards."""
        single = self.db.backend == "sqlite"
        if single:
            self.server.stop()
        port = free_port()
        server = Server(self.args.binary, self.workdir, port)
        try:
            server.start(self.config(f"merchantd-{port}.toml", idle_secs, port))
            yield server
        finally:
            server.stop()
            if single:
                self.server.start(self.config_main)

    def cold_start(self):
        """A fresh process on the same database: main's first API request, and RSS around it;
        then another fresh process whose very first request is main's `GET /store` (nothing
        warmed: the token check, the pools and the activation are all in it)."""
        with self.probe() as probe:
            c = self.main.api(probe.port)
            t0 = time.perf_counter()
            c.api("GET", "/store")
            store_first = time.perf_counter() - t0
            c.close()
        measured = self.cold_product()
        measured["store_first_ms"] = store_first * 1000
        return measured

    def cold_product(self):
        with self.probe() as probe:
            tiny = self.tiny.api(probe.port)
            tiny.api("GET", "/product")  # activates a near-empty merchant: the baseline
            tiny.close()
            time.sleep(SETTLE_SECS)
            base = probe.rss_bytes()
            c = self.main.api(probe.port)
            c.api("GET", "/health/live")  # connection open before the clock starts
            ids = ",".join(map(str, self.main.products[:10]))
            t0 = time.perf_counter()
            c.api("GET", "/product", headers={"productIds": ids})
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            c.api("GET", "/product", headers={"productIds": ids})
            second = time.perf_counter() - t0
            c.close()
            time.sleep(SETTLE_SECS)
            return {"first_ms": first * 1000, "second_ms": second * 1000, "rss_base": base,
                    "rss_main": probe.rss_bytes()}

    def scenario_idle(self):
        """Passivation gives memory back: in a fresh process with a short merchant_idle_secs, touch
        every small merchant, then wait past the idle time."""
        idle = self.p["idle_secs"]
        with self.probe(idle) as probe:
            time.sleep(0.5)
            before = probe.rss_bytes()
            t0 = time.perf_counter()
            parallel(self.multi, lambda m: self.local_client(m, probe.port).api("GET", "/product"), workers=4)
            touch = time.perf_counter() - t0
            active_peak = self.metric("merchant_actors_active", probe.port)
            touched = probe.rss_bytes()
            wait = idle * 1.25 + 5
            log(f"idle: touched {len(self.multi)} merchants in {touch:.1f} s, RSS {before / 2**20:.1f} -> "
                f"{touched / 2**20:.1f} MiB; waiting {wait:.0f} s (merchant_idle_secs = {idle})")
            time.sleep(wait)
            after = probe.rss_bytes()
            active_after = self.metric("merchant_actors_active", probe.port)
        grown = touched - before
        res = {"rss_before": before, "rss_touched": touched, "rss_after": after, "touch_seconds": touch,
               "merchants": len(self.multi), "idle_secs": idle, "active_peak": active_peak,
               "active_after": active_after,
               "given_back": (touched - after) / grown if grown > 0 else None}
        self.record("idle", res)
        log(f"idle: RSS after {after / 2**20:.1f} MiB, active merchants {active_peak} -> {active_after}")

    def metric(self, name, port=None):
        try:
            text = Http(port or self.port).request("GET", "/metrics").body.decode()
        except OSError:
            return None
        m = re.search(r"^%s(?:\{[^}]*\})?\s+([\d.eE+-]+)\s*$" % re.escape(name), text, re.M)
        return float(m.group(1)) if m else None

    # ---- perf (profile.sh) ----------------------------------------------------------------
    perf_proc = None

    def perf_start(self, name, duration):
        if not self.args.perf or (self.results.get(name) and len(self.results[name]) > 0):
            return
        os.makedirs(self.args.perf, exist_ok=True)
        out = os.path.join(self.args.perf, f"{name}.perf.data")
        seconds = max(1, duration - 2)
        callgraph = os.environ.get("PERF_CALLGRAPH", "dwarf")
        cmd = ["taskset", "-c", CLIENT_CPU, "perf", "record", "-F", "999", "-g", "--call-graph", callgraph,
               "-p", str(self.server.pid), "-o", out, "--", "sleep", str(seconds)]

        def later():
            time.sleep(1)  # let the load settle first
            self.perf_proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

        self.perf_thread = threading.Thread(target=later)
        self.perf_thread.start()
        log(f"  perf: {' '.join(cmd)}")

    def perf_wait(self):
        if getattr(self, "perf_thread", None):
            self.perf_thread.join()
            self.perf_thread = None
            if self.perf_proc:
                self.perf_proc.wait()
                self.perf_proc = None

    # ---- the whole run ------------------------------------------------------------------
    def run(self):
        t_start = time.time()
        self.prepare()
        self.server.start(self.config_main)
        log(f"merchantd pid {self.server.pid} on CPU {SERVER_CPU}, port {self.port}, {self.db.backend} "
            f"({redact(self.db.url)}); wrk and this driver on CPU {CLIENT_CPU}")
        self.login(self.merchants + self.scratch + self.multi)
        for m in self.merchants + self.scratch:
            self.make_categories(m, 20)
        # Scenario 8 and the catalogues every other scenario reads.
        for m in self.seed_targets:
            res = self.seed_products(m, self.p["products"], clients=1)
            self.record("seed", dict(res, merchant=m.key))
            log(f"seeded {res['products']:,} products into {m.key} in {res['seconds']:.2f} s "
                f"({res['per_sec']:,.0f}/s, {res['clients']} client(s), batch p50 "
                f"{res['batch_p50_ms']:.1f} ms, p99 {res['batch_p99_ms']:.1f} ms)")
        if self.shop not in self.seed_targets:
            self.seed_products(self.shop, 10)
        if self.multi:
            t0 = time.perf_counter()
            parallel(self.multi, lambda m: self.seed_products(m, self.p["merchant_products"], clients=1),
                     workers=4)
            log(f"seeded {len(self.multi)} merchants x {self.p['merchant_products']} products in "
                f"{time.perf_counter() - t0:.1f} s")
        self.f_main = self.ids_file("main.txt", [self.main])
        self.f_multi = self.ids_file("multi.txt", self.multi) if self.multi else None
        self.f_writer = self.wrk.data_file("writer.txt", [self.writer.token])
        if self.want("history"):
            c = self.main.api(self.port)
            opened = c.write("POST", "/basket", "baskets", {f"o{i}": {
                "storeId": self.main.stores["main"], "note": "open",
                "basketProducts": {"l": {"productId": self.main.products[i], "quantity": 1}}} for i in range(20)})
            c.close()
            self.f_main_open = self.wrk.data_file(
                "main-open.txt", [self.main.token, ",".join(str(b["id"]) for b in opened.values())])
        self.f_main_update = self.wrk.data_file(
            "main-update.txt", [self.main.token, ",".join(map(str, self.main.categories))])
        if self.want("ceiling", "read", "write", "list", "store", "mix", "multi", "refresh", "basket",
                     "calculate", "sale", "customers", "sync"):
            self.wrk.run("/health/live", 64, 1)  # warm-up, not recorded
            for r in range(self.p["runs"]):
                self.run_round(r)
        if self.want("history", "cold", "memory"):
            self.ladder()
        if self.want("idle") and self.multi:
            self.scenario_idle()
        if self.want("digest"):
            self.scenario_digest()
        if self.want("salesreport"):
            self.scenario_sales_report(self.p.get("report_sales", 1_000_000))
        self.elapsed = time.time() - t_start

    def cleanup(self):
        self.perf_wait()
        self.server.stop()
        if self.db and not self.args.keep:
            self.db.drop()
        elif self.db and self.db.postgres_url:
            log(f"kept database {self.db.name}")
        if self.args.keep:
            log(f"kept {self.workdir}")
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

def fmt_rps(x):
    return f"{x:,.0f} rps" if x is not None else "–"


def fmt_ms(x):
    if x is None:
        return "–"
    return f"{x:.2f} ms" if x < 10 else f"{x:.1f} ms"


def fmt_ratio(x):
    return f"{x:.3f} ×" if x is not None else "–"


def fmt_mib(x):
    return f"{x / 2**20:.1f} MiB" if x is not None else "–"


def verdict(ok, errors=0):
    if errors:
        return f"NOT MET ({errors} errors)"
    if ok is None:
        return "–"
    return "met" if ok else "not met"


def build_table(b):
    R, rows = b.results, []

    def row(num, measure, value, ratio, target, met):
        rows.append((num, measure, value, ratio, target, met))

    def med(name, key):
        return median([r.get(key) for r in R.get(name, [])])

    def errs(name, default_keys=("non2xx", "socket_errors")):
        total = 0
        for r in R.get(name, []):
            total += r["errors"] if "errors" in r else sum(r.get(k, 0) for k in default_keys)
        return total

    if "ceiling" in R:
        row("1", "ceiling: GET /health/live, 64 conn", fmt_rps(med("ceiling", "rps")), "1 ×", "(yardstick)",
            verdict(None, errs("ceiling")))
    if "read" in R:
        ratio, p99 = med("read", "ratio"), med("read", "p99_ms")
        row("2", "GET /product, 10 random productIds, 64 conn", fmt_rps(med("read", "rps")), fmt_ratio(ratio),
            "≥ 0.40 ×", verdict(ratio is not None and ratio >= 0.40, errs("read")))
        row("2", "  latency p50 / p99", f"{fmt_ms(med('read', 'p50_ms'))} / {fmt_ms(p99)}", "", "p99 ≤ 3 ms",
            verdict(p99 is not None and p99 <= 3))
    if "write" in R:
        ratio = med("write", "ratio")
        non201 = sum(r["lua"].get("non201", 0) for r in R["write"])
        row("3", f"POST /category, 1 object, 64 conn (non-201: {non201})",
            f"{fmt_rps(med('write', 'rps'))}, p50 {fmt_ms(med('write', 'p50_ms'))}", fmt_ratio(ratio),
            "≥ 0.15 ×, all 201", verdict(ratio is not None and ratio >= 0.15, errs("write")))
    if "list" in R:
        p50 = med("list", "p50_ms")
        row("4", f"GET /product, no filter, {b.p['products']:,} products, 1 conn (p50)", fmt_ms(p50), "",
            "≤ 25 ms", verdict(p50 is not None and p50 <= 25, errs("list")))
    ladder = R.get("ladder", [])
    if ladder and "history" in b.only:
        for kind, label in (("write", "PUT /category"), ("basket_write", "PUT /basket note, open basket")):
            base = None
            for step in ladder:
                p50 = median([r[kind].get("p50_ms") for r in step["runs"] if kind in r])
                e = sum(r[kind]["errors"] for r in step["runs"] if kind in r)
                if base is None:
                    base = p50
                rel = p50 / base if base and p50 else None
                last = step is ladder[-1]
                row("5", f"1 client's write p50 ({label}), history {step['history']:,} baskets", fmt_ms(p50),
                    f"{rel:.2f} × h0" if rel else "–", "≤ 1.3 × h0 at 200,000" if last else "",
                    verdict(rel is not None and rel <= 1.3, e) if last else verdict(None, e))
    if ladder and "cold" in b.only:
        for step in ladder:
            first = median([r.get("first_ms") for r in step["runs"]])
            second = median([r.get("second_ms") for r in step["runs"]])
            last = step is ladder[-1]
            store = median([r.get("store_first_ms") for r in step["runs"]])
            row("6", f"cold activation, {b.p['products']:,} products + {step['history']:,} baskets: "
                     f"1st / 2nd request", f"{fmt_ms(first)} / {fmt_ms(second)}", "",
                "≤ 50 ms at 200,000" if last else "",
                verdict(first is not None and first <= 50) if last else "–")
            if store is not None:
                row("6", f"  the process's first request, GET /store, {step['history']:,} baskets",
                    fmt_ms(store), "", "≤ 50 ms" if last else "",
                    verdict(store <= 50) if last else "–")
    if ladder and "memory" in b.only:
        deltas = [(s["history"], median([r["rss_main"] - r["rss_base"] for r in s["runs"] if "rss_main" in r]))
                  for s in ladder]
        h0, d0 = deltas[0]
        per_product = d0 / b.p["products"] if d0 is not None else None
        row("7", f"RSS of one active merchant, {b.p['products']:,} products, history {h0:,}: per product",
            f"{per_product:,.0f} B ({fmt_mib(d0)})" if per_product is not None else "–", "",
            "≤ 1 KiB per product", verdict(per_product is not None and per_product <= 1024))
        for h, d in deltas[1:]:
            last = h == deltas[-1][0]
            grow = d - d0 if d is not None and d0 is not None else None
            row("7", f"  RSS of the merchant with {h:,} baskets (history adds)", f"{fmt_mib(d)} (+{fmt_mib(grow)})",
                "", "history adds ≤ 16 MiB" if last else "",
                verdict(grow is not None and grow <= 16 * 2**20) if last else "–")
    if "seed" in R and "seed" in b.only:
        ps = med("seed", "per_sec")
        e = sum(r["errors"] for r in R["seed"])
        p50, p99 = med("seed", "batch_p50_ms"), med("seed", "batch_p99_ms")
        row("8", f"seeding via API, batches of 200, {R['seed'][0]['clients']} client(s); batch p50 / p99",
            f"{ps:,.0f} products/s; {fmt_ms(p50)} / {fmt_ms(p99)}", "", "≥ 25,000/s, p99 ≤ 2 × p50",
            verdict(ps is not None and ps >= 25000 and p50 is not None and p99 <= 2 * p50, e))
    if "store" in R:
        row("a", "GET /product, 10 ids + storeId (stock), 64 conn",
            f"{fmt_rps(med('store', 'rps'))}, p99 {fmt_ms(med('store', 'p99_ms'))}",
            fmt_ratio(med("store", "ratio")), "(report)", verdict(None, errs("store")))
    if "mix" in R:
        ratio = median([r.get("p99_ratio") for r in R["mix"]])
        share = median([r["write_share"] for r in R["mix"]])
        row("b", f"90/10 mix: read p99 vs read-only p99 (writes {100 * share:.1f} % of requests)",
            f"{fmt_ms(median([r['read_p99_ms'] for r in R['mix']]))} vs "
            f"{fmt_ms(median([r['read_only_p99_ms'] for r in R['mix']]))}",
            f"{ratio:.2f} ×" if ratio else "–", "≤ 1.5 × at 10 % writes",
            verdict(ratio is not None and ratio <= 1.5, errs("mix")) if share >= 0.08 else
            f"not met (writes reached only {100 * share:.1f} %)")
    if "multi" in R:
        vs = med("multi", "vs_one")
        row("c", f"{b.p['merchants']:,} merchants × {b.p['merchant_products']} products, 10 ids, 64 conn",
            fmt_rps(med("multi", "rps")), f"{vs:.2f} × one merchant" if vs else "–", "≥ 0.8 × one merchant",
            verdict(vs is not None and vs >= 0.8, errs("multi")))
        by_cpu = med("multi", "cpu_vs_one")
        if by_cpu:
            row("c", "  by server CPU a request (µs: one merchant / these)",
                f"{med('read', 'cpu_us'):.1f} / {med('multi', 'cpu_us'):.1f} µs", f"{by_cpu:.2f} × one merchant",
                "(report)", "–")
    if "multi_awake" in R:
        vs = med("multi_awake", "vs_one")
        row("c", "  the same at once after: every merchant awake",
            fmt_rps(med("multi_awake", "rps")), f"{vs:.2f} × one merchant" if vs else "–", "≥ 0.8 × one merchant",
            verdict(vs is not None and vs >= 0.8, errs("multi_awake")))
    if "refresh" in R:
        ratio = med("refresh", "ratio")
        row("d", "refresh grants, 64 conn", f"{med('refresh', 'rps'):,.0f} grants/s", fmt_ratio(ratio), "≥ 0.10 ×",
            verdict(ratio is not None and ratio >= 0.10, errs("refresh")))
    if "basket" in R:
        ratio = med("basket", "ratio")
        exact = all(r["stock"]["exact"] for r in R["basket"])
        sales = median([r["lua"].get("completed", 0) / r["seconds"] for r in R["basket"] if r["seconds"]])
        row("e", f"basket + payment + completion, 64 conn ({sales:,.0f} sales/s; stock "
                 f"{'exact' if exact else 'NOT exact'})", f"{med('basket', 'rps'):,.0f} req/s", fmt_ratio(ratio),
            "≥ 0.10 ×, stock exact", verdict(ratio is not None and ratio >= 0.10 and exact, errs("basket")))
    if "calculate" in R:
        ratio = med("calculate", "ratio")
        row("g", "POST /basket/calculate, 20 lines, 64 conn", fmt_rps(med("calculate", "rps")), fmt_ratio(ratio),
            "≥ 0.3 ×", verdict(ratio is not None and ratio >= 0.3, errs("calculate")))
    if "sale" in R:
        ratio = med("sale", "ratio")
        exact = all(r["stock"]["exact"] for r in R["sale"])
        sales = median([r["lua"].get("completed", 0) / r["seconds"] for r in R["sale"] if r["seconds"]])
        row("h", f"basket + payment + completion, 2 promotions, 2 rates added, 64 conn ({sales:,.0f} sales/s; "
                 f"stock {'exact' if exact else 'NOT exact'})", f"{med('sale', 'rps'):,.0f} req/s",
            fmt_ratio(ratio), "within 1.2 × of e's cost", verdict(exact, errs("sale")))
    if "customers" in R:
        def worst(key):
            return max(median([r[k][key] for r in R["customers"]]) for k in ("surname", "email", "phone"))
        kinds = "; ".join(f"{k} {median([r[k]['p50_ms'] for r in R['customers']]):.2f} ms "
                          f"({median([r[k]['hits'] for r in R['customers']]):.0f} hits)"
                          for k in ("surname", "email", "phone"))
        p50 = worst("p50_ms")
        row("i", f"customer search among {R['customers'][-1]['customers']:,} customers, one client, p50 by kind: "
                 f"{kinds}", f"{p50:.2f} ms (p99 {worst('p99_ms'):.2f} ms)", "–", "≤ 5 ms", verdict(p50 <= 5))
    if "sync" in R:
        rate = med("sync", "sales_per_s")
        ok = all(r["repeat_ok"] for r in R["sync"])
        row("k", f"POST /basket/sync, {R['sync'][-1]['sales']:,} offline sales in batches of 200, one client "
                 f"(batch p50 {med('sync', 'batch_p50_ms'):.1f} ms, p99 {med('sync', 'batch_p99_ms'):.1f} ms; "
                 f"repeat {'answered' if ok else 'NOT answered'})", f"{rate:,.0f} sales/s", "–", "≥ 5,000 sales/s",
            verdict(rate >= 5000 and ok))
    if "digest" in R:
        r = R["digest"][-1]
        worst = max(r[k]["p50_ms"] for k in ("10000", "1000000"))
        row("l", f"GET /digest of {r['10000']['count']:,} baskets, one client, p50 by 10,000 ids "
                 f"{r['10000']['p50_ms']:.1f} ms ({r['10000']['buckets']} buckets), by 1,000,000 "
                 f"{r['1000000']['p50_ms']:.1f} ms", f"{worst:.1f} ms (worst p50)", "–", "≤ 50 ms",
            verdict(worst <= 50))
    if "salesreport" in R:
        r = R["salesreport"][-1]
        steps = r["steps"]
        month = [st["reports"][0]["p50_ms"] for st in steps]
        year = steps[-1]["reports"]
        worst = max(x["p50_ms"] for x in year)
        detail = "; ".join(f"{x['name']} {x['p50_ms']:.2f} ms" for x in year)
        row("j", f"GET /report/sales over {r['sales']:,} sales in {r['days']} days, one client, p50: {detail}; "
                 f"30 days x store after {steps[0]['days']} days {month[0]:.2f} ms, after {steps[-1]['days']} "
                 f"days {month[-1]:.2f} ms", f"{worst:.2f} ms (worst p50)", "–", "≤ 20 ms, flat in history",
            verdict(worst <= 20))
    if "idle" in R:
        r = R["idle"][-1]
        back = r["given_back"]
        row("f", f"passivation: RSS fresh → {r['merchants']:,} merchants touched → idle "
                 f"{r['idle_secs']} s later (active {r['active_peak']:.0f} → {r['active_after']:.0f})"
            if r["active_peak"] is not None and r["active_after"] is not None else
            f"passivation: RSS fresh → {r['merchants']:,} merchants touched → after idle",
            f"{fmt_mib(r['rss_before'])} → {fmt_mib(r['rss_touched'])} → {fmt_mib(r['rss_after'])}",
            f"{100 * back:.0f} % given back" if back is not None else "–", "memory given back (≥ 75 %)",
            verdict(back is not None and back >= 0.75))
    return rows


def render_table(rows):
    head = ("#", "measure", "median", "ratio", "target", "met")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(6)]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
    out = [line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def render_saved(path):
    """Re-prints the table of a saved run (with this version's table code)."""
    with open(path) as f:
        saved = json.load(f)
    b = argparse.Namespace(results=saved["results"], p=saved["params"],
                           only=set(saved.get("only") or SCENARIOS))
    print(f"{saved['backend']}: {saved['command']}")
    print(render_table(build_table(b)))
    for note in saved.get("notes", []):
        print(f"note: {note}")


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version()}


def main():
    ap = argparse.ArgumentParser(description="merchantd load benchmark (run through run.sh)")
    ap.add_argument("--binary", help="merchantd binary to measure (required unless --render)")
    ap.add_argument("--render", metavar="JSON", help="print the table of an earlier results-*.json and exit")
    ap.add_argument("--postgres", metavar="URL", help="PostgreSQL server URL; a fresh database is created on it")
    ap.add_argument("--quick", action="store_true", help="1 run, 3 s loads, smaller history and merchant set")
    ap.add_argument("--only", help="comma-separated scenarios: " + ", ".join(f"{k} ({v})" for k, v in SCENARIOS.items()))
    ap.add_argument("--runs", type=int, help="rounds of each scenario (default 3, quick 1)")
    ap.add_argument("--duration", type=int, help="seconds of each wrk load (default 10, quick 3)")
    ap.add_argument("--products", type=int, help="products of the big merchant (default 10000)")
    ap.add_argument("--history", help="history ladder, completed baskets (default 0,20000,60000,200000)")
    ap.add_argument("--history-budget-min", type=float, default=45,
                    help="stop the ladder when seeding the next step would take longer (default 45)")
    ap.add_argument("--report-sales", type=int, help="completed sales of scenario j (default 1000000)")
    ap.add_argument("--pods", type=int, default=1,
                    help="PostgreSQL databases holding the merchants (with --postgres): the home one and "
                         "pods-1 more; `merchantd tenant apply` spreads the merchants over them")
    ap.add_argument("--merchants", type=int, help="merchants of scenario c (default 1000, quick 100)")
    ap.add_argument("--idle-secs", type=int, help="merchant_idle_secs of scenario f (default 30, quick 8)")
    ap.add_argument("--out", default=os.path.join(REPO, "target", "load"), help="where results-*.json go")
    ap.add_argument("--perf", metavar="DIR", help="record perf profiles of read and write into DIR (profile.sh)")
    ap.add_argument("--keep", action="store_true", help="keep the work dir (database, logs, data files) and the PostgreSQL database")
    args = ap.parse_args()
    if args.render:
        render_saved(args.render)
        return
    if not args.binary:
        ap.error("--binary is required")
    args.binary = os.path.abspath(args.binary)
    command = redact(os.environ.get("BENCH_COMMAND") or " ".join([sys.argv[0]] + sys.argv[1:]))

    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is missing (run.sh installs wrk)")
    if (os.cpu_count() or 1) < 2:
        sys.exit("needs 2 CPUs: the server is pinned to CPU 0, wrk and the driver to CPU 1")
    os.sched_setaffinity(0, {int(CLIENT_CPU)})  # the driver never competes with the server's core

    bench = Bench(args)
    started = datetime.now(timezone.utc)
    log(f"command: {command}")
    log(f"binary: {args.binary}; profile: {'quick' if args.quick else 'full'} {bench.p}")
    try:
        bench.run()
    except BaseException:
        log("failed; server log tail:\n" + bench.server.log_tail())
        raise
    finally:
        bench.cleanup()

    rows = build_table(bench)
    table = render_table(rows)
    os.makedirs(args.out, exist_ok=True)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    out = os.path.join(args.out, f"results-{stamp}.json")
    with open(out, "w") as f:
        json.dump({"command": command, "started": started.isoformat(), "elapsed_s": bench.elapsed,
                   "binary": args.binary, "backend": bench.db.backend, "pods": args.pods, "machine": machine(),
                   "params": bench.p, "only": sorted(bench.only), "pbkdf2_iterations": PBKDF2_ITERATIONS, "notes": bench.notes,
                   "table": [dict(zip(("num", "measure", "median", "ratio", "target", "met"), r)) for r in rows],
                   "results": bench.results}, f, indent=1, default=str)
    mach = machine()
    print()
    print(f"merchantd load benchmark — {bench.db.backend}, {'quick' if args.quick else 'full'}, "
          f"median of {bench.p['runs']} run(s), {bench.p['duration']} s loads; {mach['cores']} cores "
          f"({mach['cpu']}), server on CPU {SERVER_CPU} (workers = 1), wrk on CPU {CLIENT_CPU}; "
          f"pbkdf2_iterations lowered to {PBKDF2_ITERATIONS} for provisioning")
    print(f"command: {command}")
    print()
    print(table)
    print()
    for note in bench.notes:
        print(f"note: {note}")
    print(f"raw results: {out}  (took {bench.elapsed / 60:.1f} min)")


if __name__ == "__main__":
    main()
