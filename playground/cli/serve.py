"""``playground serve``: a live room that invited people join from their own browsers.

Prints one invite link per human seat, one per line on standard output (everything else goes to
standard error), and runs until Ctrl-C or SIGTERM: then every browser is told the study ended,
the session is saved as finished, and its id is printed last.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any, TextIO

from playground import errors, events, personas
from playground.cli.flag_ranges import AGENTS, SEED, Number
from playground.cli.flags import (
    LLM_FLAGS,
    add_db_flags,
    add_llm_flags,
    agent_library,
    settings_from,
    start_local_embedder,
)
from playground.settings import PRESETS, Settings
from playground.storage import open_database

#: Human seats per session.
HUMANS = Number(1, 50)
#: Minutes a conversation (or a review) lasts.
MINUTES = Number(0, 24 * 60, whole=False, above=True)
#: A TCP port (0: any free one).
PORT = Number(0, 65_535)
SETTING_FLAGS = {**LLM_FLAGS, "seed": "--seed", "preset": "--preset"}


HELP = "a live room that invited people join from their browsers (a human study)"
DESCRIPTION = (
    "Starts a session with --agents AI participants and --humans invited seats, serves the"
    " participants' page, and prints one invite link per seat. Each link admits one person to"
    " this session only. Listens on 127.0.0.1 (this machine) unless --host says otherwise. Runs"
    " until Ctrl-C, which ends the session for everyone."
)


def add_parser(sub: Any, default_db: str, busy_timeout: float) -> None:
    """Add ``serve`` to the subcommands ``sub``."""
    p = sub.add_parser("serve", help=HELP, description=DESCRIPTION)
    p.add_argument("--humans", type=HUMANS, default=2, help="invited seats (default 2)")
    p.add_argument("--agents", type=AGENTS, default=1, help="AI participants (default 1)")
    add_listen_flags(p)
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument(
        "--preset",
        default="active-contributor",
        choices=list(PRESETS),
        help="proactivity preset for every agent (default active-contributor)",
    )
    p.add_argument(
        "--personas", default=str(personas.DEFAULT_DIR), help="directory of persona files"
    )
    p.add_argument("--icebreaker", help="a first message, said by one of the agents")
    p.add_argument(
        "--minutes",
        type=MINUTES,
        help="end the conversation after this many minutes; people then review it message by"
        " message until Ctrl-C (default: the conversation goes on until Ctrl-C)",
    )
    p.add_argument(
        "--show-thoughts",
        action="store_true",
        help="a condition: people's pages show the agents' thoughts (recorded with the session)",
    )
    add_llm_flags(p)
    add_db_flags(p, default_db, busy_timeout)


def add_listen_flags(p: argparse.ArgumentParser) -> None:
    """Where the participants' page is served: --host, --port, --tls-cert, --tls-key."""
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: only this machine); 0.0.0.0 exposes the"
        " study to the local network",
    )
    p.add_argument("--port", type=PORT, default=8765, help="TCP port (default 8765; 0: any free)")
    p.add_argument("--tls-cert", metavar="PEM", help="serve HTTPS with this certificate chain")
    p.add_argument("--tls-key", metavar="PEM", help="the certificate's private key")


def exposure_warning(host: str, port: int) -> str | None:
    """What to say when the study listens beyond this machine."""
    from playground.study.server import is_loopback

    if is_loopback(host):
        return None
    return (
        f"Listening on {host}:{port}: anyone on your network who has a link can join as that"
        " seat. Share each link with one person only."
    )


def serve_settings(args: argparse.Namespace) -> Settings:
    """``serve``'s settings: its flags over the environment; agents write at typing speed."""
    settings = settings_from(args, SETTING_FLAGS)
    settings.room.pace = "typing"  # people read along: no agent posts faster than it could type
    settings.room.show_thoughts = args.show_thoughts
    return settings


async def serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from playground import factory
    from playground.room import loops
    from playground.study.hub import StudyHub
    from playground.study.seats import SeatBook
    from playground.study.server import StudyServer

    settings = serve_settings(args)
    library = agent_library(args)
    embedder = start_local_embedder(settings)
    db = open_database(args.db, busy_timeout=args.busy_timeout)
    engine = await factory.build_engine(settings, embedder=embedder)
    bus = events.EventBus()
    room = server = None
    try:
        room, _ = factory.open_room(settings, engine, db=db, bus=bus)
        await factory.add_agents(
            room, settings, factory.pick_personas(library, args.agents, args.seed)
        )
        book = SeatBook(db, room.session_id)
        seats = book.add(args.humans, room.clock.now_iso())
        server = StudyServer(
            StudyHub(room, book),
            host=args.host,
            port=args.port,
            certificate=args.tls_cert,
            key=args.tls_key,
        )
        where = await server.start()
        if (warning := exposure_warning(args.host, where.port)) is not None:
            print(warning, file=err)
        print(f"Session {room.session_id}: one invite link per person:", file=err)
        for seat in seats:
            print(server.link(seat), file=out, flush=True)
        print("Ctrl-C ends the session for everyone.", file=err, flush=True)
        if args.icebreaker:
            starter = room.agents[0].name
            await room.post(starter, args.icebreaker, origin="icebreaker")
        if args.minutes is None:
            await loops.run_realtime(room)
        else:
            await loops.run_for(room, args.minutes * 60)
            print("The conversation is over: people can now review it.", file=err, flush=True)
            await asyncio.Event().wait()  # the review stays open until Ctrl-C
    except asyncio.CancelledError:
        if room is not None and room.status == "running":
            room.finish("finished", "the researcher stopped the server")
        raise
    finally:
        unsaved = bus.failure
        if room is not None and isinstance(unsaved, errors.RecordingError):
            loops.fail_unrecorded(room, unsaved)
        elif room is not None and room.status == "running":
            room.finish("interrupted", "the server stopped")
        if server is not None:
            await server.stop("The researcher ended the study. Thank you for taking part.")
        await engine.close()
        if room is not None and unsaved is None:
            print(room.session_id, file=out, flush=True)
        db.close()
    return 0
