"""Hand-built agent histories: 50 user/assistant exchanges in ten sessions, 20 of the user's messages the evidence
of 20 paraphrased questions, among a few hundred tool outputs of eight kinds (health checks, access log lines, disk,
queue and process metrics, CI jobs, deploys, cron backups) with their times, counters and ids changing. Seeded, so
the figures of docs/retrieval.md can be made again:

    PYTHONPATH=packages:. python -m tests.agent_history --seeds 0-5 --outputs 200,400,1000

prints, per budget, how many of the question-budgets found their evidence message in the context. ``--kinds drawn``
draws the tool outputs from six other kinds instead, whose changing field is an id drawn from letters (a session
token without a digit, a base62 upload id, a base64url trace id, a login code), pytest's short summary with its
duration, or a preview named by a slug of words (which stays a line of its own); ``--kinds runners`` from four
test runners' summaries with the time the run took (pytest's ``-q`` line, go test, cargo test, jest); ``--kinds
small`` from three whose id is drawn from small letters and digits (a pod's name after each rollout, a nanoid, a
preview's host); ``--kinds short`` from three whose id is short (a link's code of six characters, a DaemonSet's
pod) or that name a preset with a number (``4k60fps``, ``lz4hc``); ``--kinds joined`` from two whose id is drawn
over small letters, digits, ``_`` and ``-``; ``--kinds all`` from the first twenty-one.
``--voice bot`` writes the outputs as an imported team chat does a bot's notifications: role ``user``, spoken by
``opsbot``, marked ``metadata["bot"]`` (``--voice person``: the same unmarked, as a person's words); ``--lines``
prints too how many lines of the contexts the outputs took."""

from __future__ import annotations

import argparse
import random
import time

from hippo import Memory

T0 = 1_772_352_000.0  # 2026-03-01T08:00:00Z

# (evidence the user states, the question asking for it in other words)
FACTS = [
    ("The disk on db-2 filled up overnight, so every write to the orders table fails.",
     "Why are the order writes failing?"),
    ("Our staging cluster runs in Frankfurt, production in Dublin.", "In which city do we run the test environment?"),
    ("Maria from the payments team owns the refund service now.",
     "Whom should I ask about giving customers their money back?"),
    ("We pinned Postgres to 15.4 because 16 broke the migration scripts.", "What stopped the database upgrade?"),
    ("The nightly backup must finish before the 6am batch import starts.", "What deadline does the nightly job have?"),
    ("My manager wants the latency report every Friday afternoon.",
     "Which day does my boss expect the performance numbers?"),
    ("The search pods crash when the synonym file is larger than a megabyte.", "Why does search keep restarting?"),
    ("I rotated the API keys for the mobile app last Tuesday.", "When did the app credentials last change?"),
    ("The canary deploy goes to five percent of traffic for an hour first.",
     "How much traffic gets a new release at first?"),
    ("Our on-call rotation switches every Monday at noon.", "When does the pager move to the next person?"),
    ("The invoice worker leaks memory when a customer has thousands of line items.",
     "What runs out of memory with big customers?"),
    ("Grafana dashboards for the queue live in the folder called pipeline-health.",
     "Where can I find the charts for the pipeline?"),
    ("The CDN cache is purged automatically after each frontend release.",
     "What is cleared after we ship the website?"),
    ("We moved the cron jobs from the old VM to Kubernetes CronJobs in January.",
     "Where did the periodic tasks move to?"),
    ("The flaky test is test_checkout_timeout; it fails about once in thirty runs.",
     "Which check fails now and then for no reason?"),
    ("Sam is on parental leave until the end of April, so ask Priya about billing.",
     "Who should I ask about invoices this month?"),
    ("The rate limiter allows 300 requests per minute per tenant.", "How many calls a minute may one customer make?"),
    ("Logs older than fourteen days are shipped to cold storage in the archive bucket.",
     "When do old logs move out of the hot tier?"),
    ("The load balancer health probe hits /readyz, not /healthz.", "Which endpoint does the load balancer check?"),
    ("We chose Redis streams over Kafka for the notification fan-out because of cost.",
     "Why did we pick the cheaper option for push messages?"),
]

FILLER_USER = [
    "Can you help me look into the service again?", "Thanks, that helps.", "Let me check the dashboard first.",
    "What should we try next?", "Okay, I will ask the team.", "Can you summarise what we found so far?",
    "Good, let us move on.", "I am back, where were we?", "Please keep an eye on it.", "Any news on that?",
]
FILLER_ASSISTANT = [
    "I checked the recent outputs and nothing stands out yet; the service looks stable over the last hour and "
    "the error rate is flat.",
    "Sure. I will run the health check again and compare the numbers with the previous runs before suggesting a "
    "change.",
    "Understood. I will keep the current configuration and report anything unusual in the next summary.",
    "Here is what we know: the queue drains normally, the deploys succeeded, and the disk usage grows slowly but "
    "steadily on the database hosts.",
    "That makes sense. Let me gather the metrics for the last day and we can decide after looking at them together.",
]


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _clock(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def _hex(rng: random.Random) -> str:
    return "%08x" % rng.getrandbits(32)


def _uuid(rng: random.Random) -> str:
    h = "%032x" % rng.getrandbits(128)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# eight kinds of tool output, each a function of a generator, its time and its count so far
KINDS = [
    lambda rng, t, k: '{"status":"ok","ts":"%s","uptime_s":%d,"req":"%s"}' % (_iso(t), 3600 + 30 * k, _hex(rng)),
    lambda rng, t, k: '10.0.%d.%d - - [%s] "GET /api/orders HTTP/1.1" 200 %d "-" "curl/8.5"' % (
        rng.randint(1, 3), rng.randint(2, 250), _clock(t), rng.randint(1000, 9000)),
    lambda rng, t, k: "Filesystem /dev/nvme0n1p1 size 500G used %.1fG avail %.1fG mounted on /var/lib/postgresql "
                      "at %s" % (200 + k * 0.1, 300 - k * 0.1, _clock(t)),
    lambda rng, t, k: '{"queue":"orders","depth":%d,"consumers":4,"oldest_ms":%d,"ts":%d}' % (
        rng.randint(1000, 5000), rng.randint(1000, 90000), int(t)),
    lambda rng, t, k: "pid 4242 invoice-worker rss=%dKB cpu_time=%.2fs threads=12 sampled %s id %s" % (
        rng.randint(100000, 900000), rng.uniform(10, 900), _clock(t), _uuid(rng)),
    lambda rng, t, k: "CI job %s for main finished: success, 412 tests passed in %dm%ds at %s" % (
        _hex(rng), rng.randint(4, 9), rng.randint(0, 59), _iso(t)),
    lambda rng, t, k: "deploy %s of web-frontend rolled out to 3 replicas at %s (image sha %s%s)" % (
        _uuid(rng), _clock(t), _hex(rng), _hex(rng)),
    lambda rng, t, k: "cron backup-db finished at %s: wrote %d bytes to s3://backups/db/%s.tar.gz in %.1fs" % (
        _clock(t), rng.randint(10 ** 9, 9 * 10 ** 9), _hex(rng), rng.uniform(60, 600)),
]


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_BASE62 = _LETTERS + "0123456789"
_WORDS = ["brave", "otter", "fig", "calm", "river", "maple", "quiet", "falcon", "amber", "stone", "lucky", "panda"]


def _drawn(rng: random.Random, n: int, alphabet: str = _LETTERS) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


# six kinds whose changing field is no number: an id drawn from letters (or letters and digits), a duration in
# pytest's summary centred in its rule, a slug of words
DRAWN_KINDS = [
    lambda rng, t, k: "auth: session %s issued for user alice, valid for one hour" % _drawn(rng, 24),
    lambda rng, t, k: "upload complete: object %s stored in bucket media-prod (image/png)" % _drawn(
        rng, 22, _BASE62),
    lambda rng, t, k: "trace %s: GET /api/orders served by orders-api, status ok" % _drawn(rng, 16, _BASE62 + "-_"),
    lambda rng, t, k: (" 412 passed in %.2fs " % rng.uniform(60, 300)).center(80, "="),
    lambda rng, t, k: "login code for the admin console: %s (expires soon)" % _drawn(rng, 12),
    lambda rng, t, k: "preview %s-%s-%s is ready for the checkout branch" % tuple(rng.sample(_WORDS, 3)),
]
# four test runners' summaries, whose only changing field is the time the run took
RUNNER_KINDS = [
    lambda rng, t, k: "412 passed in %.2fs" % rng.uniform(60, 300),
    lambda rng, t, k: "ok  \texample.com/shop/api\t%.3fs" % rng.uniform(0.1, 3),
    lambda rng, t, k: "test result: ok. 57 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in "
                      "%.2fs" % rng.uniform(0.1, 30),
    lambda rng, t, k: "Test Suites: 9 passed, 9 total\nTests:       118 passed, 118 total\nSnapshots:   0 total\n"
                      "Time:        %.3f s\nRan all test suites." % rng.uniform(2, 40),
]
_SMALL = "abcdefghijklmnopqrstuvwxyz0123456789"
_K8S = "bcdfghjklmnpqrstvwxz2456789"  # what Kubernetes draws a pod's hash and end from
# three kinds whose changing field is an id drawn from small letters and digits: a pod's name after each rollout, a
# nanoid, a preview deployment's host
SMALL_KINDS = [
    lambda rng, t, k: "NAME                        READY   STATUS    RESTARTS   AGE\nworker-%s-%s   1/1     Running   0"
                      "          %dm" % (_drawn(rng, 10, _K8S), _drawn(rng, 5, _K8S), rng.randint(1, 59)),
    lambda rng, t, k: "export finished: report %s written to the reports bucket" % _drawn(rng, 21, _SMALL),
    lambda rng, t, k: "preview ready at https://shop-web-%s.previews.example.com for the checkout branch" % _drawn(
        rng, 12, _SMALL),
]
# three kinds whose id is short: a link's code of six small letters and digits (two in three hold a vowel), a
# DaemonSet's pod (its name's five-character end), and a clip encoded with a named preset that holds a number
SHORT_KINDS = [
    lambda rng, t, k: "short link %s created for the spring campaign at %s" % (_drawn(rng, 6, _SMALL), _clock(t)),
    lambda rng, t, k: "NAME            READY   STATUS    RESTARTS   AGE\nfluentd-%s   1/1     Running   0          %dm"
                      % (_drawn(rng, 5, _K8S), rng.randint(1, 59)),
    lambda rng, t, k: "encoded clip %s with preset %s: %d frames at %s" % (
        _hex(rng), rng.choice(["4k60fps", "1080p30", "lz4hc"]), rng.randint(1000, 9000), _clock(t)),
]
# two kinds whose id is drawn over small letters, digits, ``_`` and ``-`` (a nanoid of a lower-case alphabet)
JOINED_KINDS = [
    lambda rng, t, k: "export finished: report %s written to the reports bucket" % _drawn(rng, 21, _SMALL + "_-"),
    lambda rng, t, k: "trace %s: GET /api/orders served by orders-api, status ok" % _drawn(rng, 16, _SMALL + "_-"),
]
KIND_SETS = {"digits": KINDS, "drawn": DRAWN_KINDS, "runners": RUNNER_KINDS, "small": SMALL_KINDS,
             "short": SHORT_KINDS, "joined": JOINED_KINDS, "all": KINDS + DRAWN_KINDS + RUNNER_KINDS + SMALL_KINDS}


# how the tool outputs are written: by a tool, or as an imported chat writes a bot's messages, marked or not
VOICES = {"tool": {"role": "tool"}, "bot": {"role": "user", "speaker": "opsbot", "metadata": {"bot": True}},
          "person": {"role": "user", "speaker": "opsbot"}}


def history(seed: int, outputs: int, kind_set: str = "digits", voice: str = "tool"
            ) -> tuple[list[dict], list[tuple[int, str]]]:
    """The messages of one history (``Memory.add_many`` items, in order) and its questions, each with the index of
    its evidence message among them; its tool outputs are of the kinds of ``KIND_SETS[kind_set]``, written in the
    voice of ``VOICES[voice]``."""
    rng = random.Random(seed)
    pool = KIND_SETS[kind_set]
    kinds = rng.sample(range(len(pool)), rng.randint(min(5, len(pool) - 1), min(8, len(pool))))
    evidence_at = set(rng.sample(range(50), len(FACTS)))
    facts = list(range(len(FACTS)))
    rng.shuffle(facts)
    # where each tool output goes: after one of the 50 exchanges
    after = sorted(rng.randrange(50) for _ in range(outputs))
    counts = {k: 0 for k in kinds}
    items: list[dict] = []
    questions: list[tuple[int, str]] = []
    t = T0
    slot = 0
    for x in range(50):
        session = f"s{x // 5}"
        t += rng.uniform(60, 900)
        if x in evidence_at:
            f = facts.pop()
            questions.append((len(items), FACTS[f][1]))
            user = FACTS[f][0]
        else:
            user = rng.choice(FILLER_USER)
        items.append({"text": user, "role": "user", "timestamp": t, "session_id": session})
        t += rng.uniform(5, 60)
        items.append({"text": rng.choice(FILLER_ASSISTANT), "role": "assistant", "timestamp": t,
                      "session_id": session})
        while slot < len(after) and after[slot] == x:
            kind = rng.choice(kinds)
            t += 30
            items.append({"text": pool[kind](rng, t, counts[kind]), "timestamp": t, "session_id": session,
                          **VOICES[voice]})
            counts[kind] += 1
            slot += 1
    return items, questions


def found(seed: int, outputs: int, budgets: tuple[int, ...], kind_set: str = "digits", voice: str = "tool",
          lines: dict[int, list[int]] | None = None) -> dict[int, int]:
    """Per budget, how many of the history's questions got their evidence message in the context; ``lines``, when
    given, gets per budget the lines of the contexts the outputs took and the lines in all added."""
    items, questions = history(seed, outputs, kind_set, voice)
    out = dict.fromkeys(budgets, 0)
    with Memory(None) as mem:
        added = mem.add_many(items)
        ids = [i.id for i in added]
        outputs_of = {it.id for it, item in zip(added, items) if item.get("speaker") == "opsbot"
                      or item["role"] == "tool"}
        for at, q in questions:
            for b in budgets:
                rc = mem.recall(q, budget_tokens=b)
                out[b] += ids[at] in {m.id for m in rc.messages}
                if lines is not None:
                    got = lines.setdefault(b, [0, 0])
                    got[0] += sum(m.id in outputs_of for m in rc.messages)
                    got[1] += len(rc.messages)
    return out


def _span(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-5")
    ap.add_argument("--outputs", default="200,400,1000")
    ap.add_argument("--budgets", default="300,500,1000")
    ap.add_argument("--kinds", choices=sorted(KIND_SETS), default="digits")
    ap.add_argument("--voice", choices=sorted(VOICES), default="tool")
    ap.add_argument("--lines", action="store_true")
    args = ap.parse_args()
    budgets = tuple(_span(args.budgets))
    total = dict.fromkeys(budgets, 0)
    n = 0
    lines: dict[int, list[int]] | None = {} if args.lines else None
    for outputs in _span(args.outputs):
        for seed in _span(args.seeds):
            got = found(seed, outputs, budgets, args.kinds, args.voice, lines)
            n += len(FACTS)
            print(f"seed {seed} outputs {outputs}: " + " / ".join(str(got[b]) for b in budgets), flush=True)
            for b in budgets:
                total[b] += got[b]
    print("all: " + " / ".join(f"{total[b]}" for b in budgets) + f" of {n} question-budgets each")
    if lines is not None:
        print("lines of the outputs: " + " / ".join(f"{lines[b][0]} of {lines[b][1]}" for b in budgets))


if __name__ == "__main__":
    main()
