"""Memory banks on a real Chroma server (``Context.chroma_server``): same answers, shared."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import CLI_TIMEOUT_S, REPO_ROOT, run_todeval, subprocess_env
from todeval.evals.datasets.ms_tod import load_memory_bench
from todeval.nodes.context import Context
from todeval.nodes.memory.bank import bank_collection, bank_for, fill_bank
from todeval.stores.chroma import server_client
from todeval.stores.memory_bank import collection_for

pytestmark = pytest.mark.integration

SAMPLE = REPO_ROOT / "data" / "samples" / "returning_users.json"
QUERY = "book it again like last time, same place and time"


def _evaluate(out: Path, home: Path, config: Path) -> list[dict[str, Any]]:
    done = run_todeval(["evaluate", str(SAMPLE), "--suite", "memory", "--config", str(config),
                        "--out", str(out), "--checkpoints", ":memory:"], home)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_memory_evaluation_through_a_chroma_server_matches_the_disk_store(
    chroma_server: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"  # one home: the second run reuses the first one's embeddings
    on_disk, on_server = tmp_path / "disk.toml", tmp_path / "server.toml"
    on_disk.write_text("[run]\n")
    on_server.write_text(f'[run]\nchroma_server = "{chroma_server}"\n')

    served = _evaluate(tmp_path / "server", home, on_server)
    assert not (home / "memory_bank").exists(), "the banks were written to disk"
    # The default bank is the one read from the dialogue (issue 29 item 7): its own collection.
    named = Context(settings={"memory": {"bank_collection": collection_for([SAMPLE])}})
    bank = server_client(chroma_server).get_collection(bank_collection(named))
    assert bank.count() > 0
    disk = _evaluate(tmp_path / "disk", home, on_disk)
    assert (home / "memory_bank").is_dir()

    assert [line["record_id"] for line in served] == [line["record_id"] for line in disk]
    assert all(line["status"] == "done" and line["memory"] for line in served)
    assert served == disk  # thread ids too: where the vectors live is not part of a thread


# Fills the banks of some individuals of the sample on the server, waits until the bank holds
# every individual's units (the rest come from the other process), then prints what it reads
# for every individual. argv: server URL, collection, the individuals to fill (comma list), how
# many units the bank holds when both processes are done.
FILL_AND_READ = """
import json, sys, time
from pathlib import Path
from todeval.evals.datasets.ms_tod import load_memory_bench
from todeval.nodes.context import Context
from todeval.nodes.memory.bank import bank_for, fill_bank

url, collection, mine, total = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
bench, _ = load_memory_bench(Path(sys.argv[5]))
context = Context(settings={"memory": {"chroma_server": url, "bank_collection": collection}})
individuals = {individual.individual_id: individual for individual in bench.individuals}
stored = {who: fill_bank(context, individuals[who]) for who in mine}
bank = bank_for(context)
deadline = time.monotonic() + 120
while bank.count() < total:
    if time.monotonic() > deadline:
        sys.exit(f"the bank holds {bank.count()} of {total} units after 120 s")
    time.sleep(0.2)
read = {
    who: {
        "units": [unit.unit_id for unit in bank.units(who)],
        "search": [[unit.unit_id, score] for unit, score in bank.search(who, sys.argv[6], 3)],
    }
    for who in sorted(individuals)
}
print(json.dumps({"stored": stored, "read": read}))
"""


def test_two_processes_fill_and_read_memory_banks_on_one_server(
    chroma_server: str, tmp_path: Path
) -> None:
    bench, _ = load_memory_bench(SAMPLE)
    everyone = sorted(individual.individual_id for individual in bench.individuals)
    assert len(everyone) >= 3
    # What one process with an in-process bank stores and finds: the reference.
    local = Context(
        settings={"memory": {"bank_backend": "memory", "bank_collection": "two-processes-ref"}}
    )
    for individual in bench.individuals:
        fill_bank(local, individual)
    reference = bank_for(local)
    expected = {
        who: {
            "units": [unit.unit_id for unit in reference.units(who)],
            "search": [[unit.unit_id, score] for unit, score in reference.search(who, QUERY, 3)],
        }
        for who in everyone
    }
    shares = [everyone[:1], everyone[1:]]
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                FILL_AND_READ,
                chroma_server,
                "shared-bank",
                ",".join(share),
                str(reference.count()),
                str(SAMPLE),
                QUERY,
            ],
            cwd=REPO_ROOT,
            env=subprocess_env(tmp_path / f"home-{n}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for n, share in enumerate(shares)
    ]
    answers = []
    for run in runs:
        out, err = run.communicate(timeout=CLI_TIMEOUT_S)
        assert run.returncode == 0, err[-3000:]
        answers.append(json.loads(out.strip().splitlines()[-1]))

    for answer, share in zip(answers, shares, strict=True):
        assert set(answer["stored"]) == set(share) and all(answer["stored"].values())
        assert {who: read["units"] for who, read in answer["read"].items()} == {
            who: want["units"] for who, want in expected.items()
        }
        for who, read in answer["read"].items():
            assert [hit[0] for hit in read["search"]] == [h[0] for h in expected[who]["search"]]
            assert [hit[1] for hit in read["search"]] == pytest.approx(
                [h[1] for h in expected[who]["search"]], abs=1e-5
            )
    shared = bank_collection(Context(settings={"memory": {"bank_collection": "shared-bank"}}))
    assert server_client(chroma_server).get_collection(shared).count() == reference.count()
