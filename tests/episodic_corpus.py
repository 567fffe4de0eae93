"""A generated journal of realistic working days, with labelled questions, for tests and the bench.

Each labelled task happens on exactly one day; routine entries (reviews, stand-ups, on-call) repeat
with variations around them, so a question has to find its day among many similar ones. The
questions paraphrase their task rather than quote it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

from episodic.journal import append_entry


@dataclass(frozen=True)
class Task:
    project: str
    text: str
    question: str


TASKS: tuple[Task, ...] = (
    Task("payments", "Fixed the Stripe webhook retries: exponential backoff with jitter, capped at 5 attempts.", "when did I fix the webhook retries"),
    Task("payments", "Added idempotency keys to the refund endpoint so double clicks no longer refund twice.", "idempotency keys for refunds"),
    Task("payments", "Moved invoice PDF rendering from wkhtmltopdf to WeasyPrint; fonts finally embed correctly.", "switch invoice PDFs to WeasyPrint"),
    Task("payments", "Reconciled the ledger drift for EUR payouts; rounding bug in the currency converter.", "ledger drift on euro payouts rounding"),
    Task("payments", "Rotated the PayPal sandbox credentials and updated the CI secrets.", "rotate PayPal sandbox credentials"),
    Task("payments", "Implemented SEPA direct debit mandates with the new mandate reference format.", "SEPA direct debit mandates"),
    Task("payments", "Debugged 3-D Secure challenge failures on Safari caused by a blocked iframe.", "3DS challenge broken in Safari"),
    Task("payments", "Wrote the chargeback dispute evidence exporter for the finance team.", "export evidence for chargeback disputes"),
    Task("infra", "Upgraded the Postgres cluster from 14 to 16 with pg_upgrade; replication slots recreated.", "postgres major version upgrade"),
    Task("infra", "Terraformed the new VPC peering between staging and the data warehouse account.", "VPC peering terraform for the warehouse"),
    Task("infra", "Cut Docker image size from 1.2 GB to 310 MB with a multi-stage build and distroless base.", "shrinking the docker image"),
    Task("infra", "Set up Grafana alerting on p99 latency for the checkout service.", "grafana alert for checkout latency"),
    Task("infra", "Investigated the Kubernetes node OOM kills: the log shipper sidecar leaked memory.", "why were kubernetes nodes killing pods out of memory"),
    Task("infra", "Renewed the wildcard TLS certificate and automated it with cert-manager.", "TLS certificate renewal automation"),
    Task("infra", "Migrated the nightly backups from cron on a VM to a Kubernetes CronJob writing to S3.", "move nightly backups to a CronJob"),
    Task("infra", "Tuned the Redis eviction policy to allkeys-lru after the session cache filled up.", "redis eviction policy change"),
    Task("frontend", "Rebuilt the checkout form validation with zod and fixed the date picker on iOS.", "checkout form validation rewrite with zod"),
    Task("frontend", "Added dark mode to the dashboard using CSS custom properties.", "dark mode for the dashboard"),
    Task("frontend", "Fixed the infinite scroll memory leak in the orders table by virtualizing rows.", "orders table memory leak with infinite scroll"),
    Task("frontend", "Upgraded React Router to v6 and rewrote the nested route loaders.", "react router v6 upgrade"),
    Task("frontend", "Localized the onboarding flow into German and Portuguese.", "translate onboarding into German"),
    Task("frontend", "Cut the JavaScript bundle by 40 percent by lazy-loading the charts library.", "reduce the JS bundle size with lazy loading"),
    Task("frontend", "Fixed keyboard focus trapping in the modal dialogs for accessibility.", "accessibility focus trap in modals"),
    Task("search", "Tuned BM25 parameters for product search; k1 from 1.2 to 0.9 improved NDCG.", "BM25 tuning for product search"),
    Task("search", "Added synonym expansion for product search (sofa and couch, tv and television).", "synonyms in product search"),
    Task("search", "Reindexed Elasticsearch with the new analyzer for compound German words.", "german compound word analyzer reindex"),
    Task("search", "Built the typo-tolerant autocomplete on a trigram index.", "typo tolerant autocomplete"),
    Task("search", "Evaluated multilingual-e5 embeddings for semantic product search against BM25.", "evaluate e5 embeddings for semantic search"),
    Task("mobile", "Fixed the Android push notification crash on API level 34.", "android push notifications crashing"),
    Task("mobile", "Shipped offline mode for the field app with SQLite sync and conflict resolution.", "offline mode sync conflicts in the field app"),
    Task("mobile", "Set up Fastlane to publish iOS TestFlight builds from CI.", "fastlane testflight automation"),
    Task("mobile", "Reduced app cold start time from 3.1 s to 1.4 s by deferring analytics init.", "app cold start time improvement"),
    Task("data", "Wrote the dbt model for monthly recurring revenue with churn cohorts.", "dbt MRR model with churn"),
    Task("data", "Fixed the Airflow DAG that double-loaded events after daylight saving time.", "airflow DAG loading events twice after the clock change"),
    Task("data", "Backfilled two years of clickstream into the warehouse with partitioned Parquet.", "clickstream backfill into the warehouse"),
    Task("data", "Set up Great Expectations data quality checks on the orders table.", "data quality checks on orders"),
    Task("auth", "Migrated password hashing from bcrypt to argon2id with rehash on login.", "switch password hashing to argon2"),
    Task("auth", "Added WebAuthn passkey login behind a feature flag.", "passkeys login"),
    Task("auth", "Fixed the SAML SSO clock skew error for the Acme tenant.", "SAML clock skew error for Acme"),
    Task("auth", "Implemented refresh token rotation with reuse detection.", "refresh token rotation"),
    Task("docs", "Wrote the architecture decision record for choosing NATS over Kafka.", "ADR about NATS versus Kafka"),
    Task("docs", "Recorded the onboarding screencast for new backend engineers.", "onboarding video for backend hires"),
)

_PEOPLE = ("Amira", "Jonas", "Priya", "Tomás", "Mei", "Olu", "Sven", "Lucía")
_MODULES = {
    "payments": ("payouts", "invoices", "refunds", "ledger", "checkout API"),
    "infra": ("staging cluster", "CI runners", "ingress", "monitoring", "terraform modules"),
    "frontend": ("settings page", "orders table", "navigation", "design system", "checkout UI"),
    "search": ("indexer", "query parser", "ranking service", "facets"),
    "mobile": ("iOS app", "Android app", "release pipeline", "crash reporting"),
    "data": ("warehouse", "event pipeline", "dashboards", "dbt project"),
    "auth": ("login service", "session store", "admin roles", "SSO"),
    "docs": ("handbook", "API reference", "runbooks"),
}
_ROUTINE = (
    "Reviewed {person}'s pull request on the {module}; asked for smaller commits.",
    "Stand-up and sprint planning; picked up two tickets for the {module}.",
    "Paired with {person} on flaky tests in the {module}.",
    "On-call shift: triaged alerts from the {module}, nothing customer facing.",
    "Refactored helpers in the {module} and removed dead code.",
    "Answered support questions about the {module} in the team channel.",
    "Updated dependencies in the {module}; all tests green.",
    "1:1 with {person}; talked about the roadmap for the {module}.",
)


@dataclass(frozen=True)
class Labelled:
    question: str
    day: date


def write_journal(vault: Path, *, days: int, end: date, seed: int = 7, tasks: tuple[Task, ...] = TASKS) -> list[Labelled]:
    """Fill ``vault/journal`` with ``days`` days ending on ``end``; return the labelled questions."""
    rng = random.Random(seed)
    all_days = [end - timedelta(days=i) for i in range(days)][::-1]
    weekdays = [d for d in all_days if d.weekday() < 5]
    task_days = rng.sample(weekdays, min(len(tasks), len(weekdays)))
    by_day = dict(zip(task_days, tasks))
    labelled = [Labelled(by_day[d].question, d) for d in task_days]
    projects = sorted(_MODULES)
    for day in all_days:
        count = rng.randint(2, 4) if day.weekday() < 5 else rng.randint(0, 1)
        slots = sorted(rng.sample(range(8 * 60, 19 * 60, 5), count + 1))
        entries: list[tuple[str, str]] = []
        for _ in range(count):
            project = rng.choice(projects)
            text = rng.choice(_ROUTINE).format(person=rng.choice(_PEOPLE), module=rng.choice(_MODULES[project]))
            entries.append((project, text))
        if day in by_day:
            task = by_day[day]
            entries.insert(rng.randint(0, len(entries)), (task.project, task.text))
        for (project, text), minute in zip(entries, slots):
            moment = datetime.combine(day, time(minute // 60, minute % 60))
            append_entry(vault, text, project=project, now=moment)
    return labelled
