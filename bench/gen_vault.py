"""Generate a synthetic vault of N notes with realistic sizes, links, tags and aliases.

Usage: python bench/gen_vault.py OUT_DIR [--notes 10000] [--seed 7] [--realistic] [--shape default|dense|tags|long]

`--realistic` writes documentation-like notes for the model pass: about 3,200 characters of prose
on average (sentences naming tools, services and people), one note in twenty long (9,000 to
15,000 characters, several sections).

`--shape` adds what a kind of vault has more of, on top of the default notes (which it leaves
byte for byte as they are): `dense` gives every note 5 more links (one in five to a heading of the
target, `[[Note#Section 0 ...]]`, one in ten by alias), `tags` 12 more tags in the frontmatter and
6 inline, `long` about 20,000 more characters of prose in 8 more sections.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

WORDS = (
    "payments retry webhook queue worker deploy release client invoice report seo audit crawl keyword "
    "ranking backlink postgres redis cache index migration schema api endpoint token auth session "
    "latency timeout error alert incident runbook convention review test fixture pipeline build docker "
    "kubernetes terraform budget estimate meeting decision tradeoff owner team sprint backlog roadmap "
    "customer onboarding billing refund dispute ledger reconcile export import csv dashboard metric"
).split()
NAMESPACES = ["tool", "client", "topic", "type", "service", "team"]
FOLDERS = [f"area{i:02d}" for i in range(20)]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


PROPER = (
    "Stripe Postgres Redis Kafka Semrush Sentry Docker Terraform Kubernetes Grafana Looker Airflow Snowflake Shopify Magento OpenSearch RabbitMQ MinIO Celery Django FastAPI GitHub Jira Slack"
).split()
PEOPLE = ["Maria Chen", "Dana Whitfield", "Jo Lindqvist", "Marco Ruiz", "Priya Nair", "Sam Okafor"]
VERBS = ["uses", "depends on", "replaced", "integrates with", "sends events to", "is owned by", "reads from"]


def prose_sentence(rng: random.Random) -> str:
    a, b = rng.sample(PROPER, 2)
    who = rng.choice(PEOPLE)
    forms = [
        f"The {rng.choice(WORDS)} service {rng.choice(VERBS)} {a} for {rng.choice(WORDS)} {rng.choice(WORDS)}.",
        f"{who} maintains the {a} {rng.choice(WORDS)} and reviews every {rng.choice(WORDS)} change.",
        f"We moved from {a} to {b} last quarter because of {rng.choice(WORDS)} {rng.choice(WORDS)}.",
        sentence(rng, rng.randint(10, 22)),
    ]
    return rng.choice(forms)


def realistic_body(rng: random.Random, target: int) -> list[str]:
    lines: list[str] = []
    size = 0
    section = 0
    while size < target:
        heading = f"## {rng.choice(WORDS).title()} {rng.choice(WORDS)} {section}"
        lines += [heading, ""]
        for _ in range(rng.randint(2, 4)):
            paragraph = " ".join(prose_sentence(rng) for _ in range(rng.randint(3, 6)))
            lines += [paragraph, ""]
            size += len(paragraph) + 1
        section += 1
    return lines


SHAPES = ("default", "dense", "tags", "long")


def shaped(rng: random.Random, shape: str, titles: list[str], headings: list[str], tags_pool: list[str]) -> tuple[list[str], list[str]]:
    """Extra frontmatter lines and body lines for `shape` (drawn from their own random stream, so
    the default notes stay as they were)."""
    if shape == "dense":
        body = ["## Links", ""]
        for _ in range(5):
            j = rng.randrange(len(titles))
            roll = rng.random()
            target = f"{titles[j]}#{headings[j]}" if roll < 0.2 else f"alias-{j}" if roll < 0.3 else titles[j]
            body.append(f"{sentence(rng, rng.randint(6, 14))} See [[{target}]].")
        return [], body + [""]
    if shape == "tags":
        extra = sorted(set(rng.sample(tags_pool, 12)))
        return [f"  - {t}" for t in extra], [" ".join(f"#{rng.choice(tags_pool)}" for _ in range(6)), ""]
    if shape == "long":
        body: list[str] = []
        for h in range(8):
            body += [f"## Long section {h} {rng.choice(WORDS)}", ""]
            body += [" ".join(sentence(rng, rng.randint(10, 30)) for _ in range(rng.randint(12, 16))), ""]
        return [], body
    return [], []


def generate(out: Path, notes: int, seed: int, realistic: bool = False, shape: str = "default") -> list[Path]:
    rng = random.Random(seed)
    extra_rng = random.Random(seed + 1)
    out.mkdir(parents=True, exist_ok=True)
    titles = [f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {i}" for i in range(notes)]
    tags_pool = [f"{ns}/{rng.choice(WORDS)}" for ns in NAMESPACES for _ in range(15)]
    tags_pool += [f"topic/{rng.choice(WORDS)}/{rng.choice(WORDS)}" for _ in range(40)]
    headings = [f"Section 0 {WORDS[(i * 31) % len(WORDS)]}" for i in range(notes)] if shape == "dense" else []
    paths = []
    for i, title in enumerate(titles):
        folder = FOLDERS[i % len(FOLDERS)]
        tags = sorted(set(rng.sample(tags_pool, rng.randint(2, 5)))) + [rng.choice(["scope/global", "scope/acme", "scope/globex"])]
        aliases = [f"alias-{i}"] if rng.random() < 0.2 else []
        more_tags, more_body = shaped(extra_rng, shape, titles, headings, tags_pool)
        lines = ["---", f"summary: {sentence(rng, 10)[:-1]}", "tags:"] + [f"  - {t}" for t in tags] + more_tags
        if aliases:
            lines.append(f"aliases: [{aliases[0]}]")
        lines += ["---", f"# {title}", ""]
        if headings:
            lines += [f"## {headings[i]}", "", sentence(extra_rng, 12), ""]
        if realistic:
            target = rng.randint(9000, 15000) if rng.random() < 0.05 else max(800, int(rng.gauss(2700, 800)))
            lines += realistic_body(rng, target)
        for h in range(0 if realistic else rng.randint(2, 6)):
            lines += [f"## Section {h} {rng.choice(WORDS)}", ""]
            for _ in range(rng.randint(2, 6)):
                text = sentence(rng, rng.randint(8, 30))
                if rng.random() < 0.45:
                    j = rng.randrange(notes)
                    target = f"alias-{j}" if rng.random() < 0.05 else titles[j]
                    if rng.random() < 0.02:
                        target = f"Missing page {rng.randint(0, 500)}"
                    text += f" See [[{target}]]."
                if rng.random() < 0.1:
                    text += f" #{rng.choice(tags_pool)}"
                lines.append(text)
            lines.append("")
        lines += more_body
        path = out / folder / f"{title}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    # alias notes must exist under their alias names for some links: the alias lives in frontmatter
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--realistic", action="store_true", help="documentation-like prose of realistic length")
    parser.add_argument("--shape", choices=SHAPES, default="default", help="what the vault has more of (see above)")
    args = parser.parse_args()
    paths = generate(args.out, args.notes, args.seed, args.realistic, args.shape)
    size = sum(p.stat().st_size for p in paths)
    print(f"wrote {len(paths)} notes, {size / 1e6:.1f} MB, into {args.out}")


if __name__ == "__main__":
    main()
