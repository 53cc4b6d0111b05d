"""``make dev``: serve every graph with ``langgraph dev`` (LangGraph Studio) on a free port."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path


def free_port() -> int:
    """A TCP port nobody listens on right now (2024 may be taken)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def main() -> None:
    """Replace this process with ``langgraph dev --port <free> --no-browser``."""
    port = int(os.environ.get("TODEVAL_DEV_PORT") or free_port())
    langgraph = Path(sys.executable).with_name("langgraph")
    print(f"LangGraph Studio: serving the graphs of langgraph.json on http://127.0.0.1:{port}")
    os.execv(
        str(langgraph),
        [str(langgraph), "dev", "--port", str(port), "--no-browser", "--host", "127.0.0.1"],
    )


if __name__ == "__main__":
    main()
