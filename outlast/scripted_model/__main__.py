"""`python -m outlast.scripted_model --script FILE --port N`: run the scripted model server.

`main(argv)` is also what the `outlast fake-model` command calls.
"""

from __future__ import annotations

import argparse
import errno
import sys

from outlast.scripted_model.script import ScriptError, load_script
from outlast.scripted_model.server import ScriptedModelServer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="outlast fake-model",
        description="Serve the Anthropic Messages API from a scenario script.",
    )
    parser.add_argument("--script", required=True, help="scenario script (.yaml, .yml or .json)")
    parser.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind")
    parser.add_argument("--log", default=None, help="append one JSON record per request here")
    parser.add_argument(
        "--log-bodies", action="store_true", help="include each request body in the log"
    )
    parser.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="value for {{KEY}} placeholders in the script (repeatable)",
    )
    return parser


def parse_variables(pairs: list[str]) -> dict[str, str]:
    """`["A=1", "B=x=y"]` -> `{"A": "1", "B": "x=y"}`.

    Raises:
        ValueError: an item has no `=` or an empty key.
    """
    variables: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--var expects KEY=VALUE, got {pair!r}")
        variables[key] = value
    return variables


def main(argv: list[str] | None = None) -> int:
    """Run the server until interrupted; returns the process exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        variables = parse_variables(args.var)
        script = load_script(args.script)
    except (ScriptError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    try:
        server = ScriptedModelServer(
            script,
            host=args.host,
            port=args.port,
            log_path=args.log,
            variables=variables,
            log_bodies=args.log_bodies,
        )
    except OSError as exc:
        # "[Errno 98] Address already in use" named no port (a user test, 2026-12-07).
        where = f"{args.host}:{args.port}"
        hint = (
            "; choose another --port (0 picks a free one)" if exc.errno == errno.EADDRINUSE else ""
        )
        print(f"error: cannot listen on {where}: {exc.strerror or exc}{hint}", file=sys.stderr)
        return 2
    print(f"scripted model listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
