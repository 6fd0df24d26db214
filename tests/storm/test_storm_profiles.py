"""Simulated users' profiles: the seeded generator, the uncertainty mask, vagueness by difficulty,
the TOML files and their errors, LLM enrichment through the real openai client against the
loopback server, and ``playground profiles generate|list``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from playground import errors, factory, personas
from playground.domain import simulated_user as model
from playground.storm import compose, pools, profile_files, profiles
from playground.storm.task_pools import CUSTOM_POOL, TASK_POOLS
from tests.conftest import server_settings
from tests.support.cli import cli_refusal, openai_flags
from tests.support.cli import run_cli as run

REPO = Path(__file__).resolve().parents[2]
TASKS = [t for _, t in profiles.all_tasks()]
#: base 10 + traits 5 + context 4 + task attributes 8
ATTRIBUTES = 27


# -- the generator ---------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_profile_and_another_seed_another():
    assert profiles.generate_profile(7) == profiles.generate_profile(7)
    a = profiles.generate_profile(7, task="Rent an apartment", difficulty=3, uncertainty=40)
    assert a == profiles.generate_profile(7, task="rent AN apartment", difficulty=3, uncertainty=40)
    b = profiles.generate_profile(8, task="Rent an apartment", difficulty=3, uncertainty=40)
    assert a != b
    assert (a.base, a.traits, a.task.attributes) != (b.base, b.traits, b.task.attributes)


def test_one_seed_over_the_tasks_gives_different_people():
    made = [profiles.generate_profile(1, task=t) for t in TASKS]
    assert len({json.dumps(p.base, sort_keys=True) for p in made}) >= 12
    assert {p.task.category for p in made} == set(model.CATEGORIES)


def test_a_profile_draws_every_pool_attribute_from_the_paper_pools():
    p = profiles.generate_profile(3, task="Order groceries online", uncertainty=0)
    for section, pool in (
        ("base", pools.BASE),
        ("traits", pools.TRAITS),
        ("context", pools.CONTEXT),
    ):
        values = getattr(p, section)
        assert list(values) == list(pool)
        assert all(values[k] in pool[k] for k in pool)
    assert list(p.task.attributes) == list(compose.TASK_ATTRIBUTES)
    assert p.task.attributes["urgency"] in pools.URGENCY_LEVELS
    assert p.task.attributes["deal_breaker"] in TASK_POOLS[p.task.task].deal_breakers
    assert p.name in pools.NAMES[p.base["culture"]]
    assert p.origin == "offline pools"
    assert p.seed == 3
    assert p.id == "order-groceries-online-s3"
    assert p.name in p.description
    assert "Order groceries online" in p.description


def test_no_drawn_name_is_a_shipped_persona_name():
    drawn = {n.casefold() for names in pools.NAMES.values() for n in names}
    assert not drawn & {p.name.casefold() for p in personas.load_personas()}


def test_avoid_names_keeps_names_unique_within_a_batch():
    made: list[model.UserProfile] = []
    for seed in range(60):
        made.append(profiles.generate_profile(seed, avoid_names=[p.name for p in made]))
    assert len({p.name for p in made}) == 60
    plain = {n for names in pools.NAMES.values() for n in names}
    assert {p.name for p in made[:50]} == plain  # every name of the pools, then numbered ones
    assert all(p.name.rstrip("0123456789") in plain and p.name not in plain for p in made[50:])


def test_find_task_matches_known_tasks_case_insensitively_and_keeps_free_text():
    assert profiles.find_task("  buy A   smartphone ") == ("technology", "Buy a smartphone")
    assert profiles.find_task("Book a nurse for my father.") == (
        "caregiver support",
        "Book a nurse for my father",
    )
    assert profiles.find_task("Plan a garden party") == ("custom", "Plan a garden party")
    custom = profiles.generate_profile(2, task="Plan a garden party", difficulty=1)
    assert custom.task.category == "custom"
    assert custom.task.task == "Plan a garden party"
    assert "help to plan a garden party" in custom.examples[0]
    for bad in ("   ", "x" * 201):
        with pytest.raises(errors.SettingsError, match="task"):
            profiles.find_task(bad)


def test_a_difficulty_number_sets_all_four_dimensions_and_none_draws_each():
    assert profiles.generate_profile(1, difficulty=4).difficulty == model.Difficulty(
        style=4, length=4, content=4, tone=4
    )
    drawn = {profiles.generate_profile(s).difficulty for s in range(30)}
    assert len(drawn) > 20
    assert {d.style for d in drawn} == {1, 2, 3, 4, 5}
    for bad in (0, 7, True):
        with pytest.raises(errors.SettingsError, match=rf"difficulty: {bad!r} is not a level"):
            profiles.generate_profile(1, difficulty=bad)


# -- uncertainty ------------------------------------------------------------------------------


@pytest.mark.parametrize(("p", "hidden"), [(0, 0), (40, 11), (60, 16), (80, 22)])
def test_uncertainty_masks_exactly_its_share_of_the_attributes(p, hidden):
    for seed in range(5):
        prof = profiles.generate_profile(seed, uncertainty=p)
        keys = compose.attribute_keys(prof)
        assert len(keys) == ATTRIBUTES
        assert len(prof.unknown) == round(p / 100 * ATTRIBUTES) == hidden
        assert set(prof.unknown) <= set(keys)
        assert len(set(prof.unknown)) == hidden
        known = sum(len(prof.known(s)) for s in ("base", "traits", "context", "task"))
        assert known == ATTRIBUTES - hidden
        masked = prof.masked()
        shown = {f"{s}.{k}" for s, v in masked.items() for k in v if k != "task"}
        assert not shown & set(prof.unknown)
        assert len(shown) == ATTRIBUTES - hidden


def test_masks_differ_by_seed_and_grow_with_the_level():
    base = profiles.generate_profile(4, task="Rent an apartment", uncertainty=0)
    sets = [set(profiles.with_uncertainty(base, p, 4).unknown) for p in (40, 60, 80)]
    assert sets[0] < sets[1] < sets[2]
    assert profiles.with_uncertainty(base, 60, 4) == profiles.with_uncertainty(base, 60, 4)
    assert profiles.with_uncertainty(base, 60, 5).unknown != sets[1]
    back = profiles.with_uncertainty(profiles.with_uncertainty(base, 80, 4), 0, 4)
    assert back.unknown == []
    assert back.uncertainty == 0


def test_a_budget_the_user_does_not_know_is_not_quoted_by_their_texts():
    masked = 0
    for seed in range(60):
        full = profiles.generate_profile(seed, difficulty=1)
        budget = full.task.attributes["budget"]
        assert budget in " ".join(full.task.success_criteria)  # level 1 quotes it
        p = profiles.with_uncertainty(full, 80, seed)
        texts = p.task.requirements + p.task.success_criteria + p.examples
        if "task.budget" in p.unknown:
            masked += 1
            assert not any(budget in t for t in texts)
            assert any(compose.UNSURE in t for t in p.task.success_criteria)
            assert all(len(e) <= model.USER_LENGTH[1] for e in p.examples)
            assert profile_files.check_mask(p) is None
        else:
            assert (p.task, p.examples) == (full.task, full.examples)
    assert 20 < masked < 60


@pytest.mark.parametrize("bad", [50, -40, 100, "40", True, None])
def test_an_uncertainty_that_is_not_a_paper_level_is_refused(bad):
    with pytest.raises(errors.SettingsError) as caught:
        profiles.generate_profile(1, uncertainty=bad)
    assert repr(bad) in str(caught.value)
    assert "0, 40, 60, 80" in str(caught.value)
    assert caught.value.field == "uncertainty"
    with pytest.raises(errors.SettingsError, match="0, 40, 60, 80"):
        profiles.with_uncertainty(profiles.generate_profile(1), bad, 1)


# -- vaguer at higher difficulty --------------------------------------------------------------


def _share_precise(level: int) -> float:
    texts = [
        t
        for task in TASKS
        for seed in range(4)
        for t in profiles.generate_profile(seed, task=task, difficulty=level).task.requirements
    ]
    return sum(map(compose.is_precise, texts)) / len(texts)


def test_requirements_are_vaguer_at_a_higher_difficulty():
    shares = [_share_precise(level) for level in range(1, 6)]
    assert shares[0] == shares[1] == 1.0
    assert 0.2 < shares[2] < 0.5
    assert shares[3] == shares[4] == 0.0
    for task in [*TASKS, "Plan a garden party"]:
        one = profiles.generate_profile(9, task=task, difficulty=1).task
        five = profiles.generate_profile(9, task=task, difficulty=5).task
        assert all(map(compose.is_precise, one.requirements + one.success_criteria))
        assert not any(map(compose.is_precise, five.requirements + five.success_criteria))
        assert any("not sure" in r.casefold() for r in five.requirements)
        assert any(
            "but also" in r
            for r in profiles.generate_profile(9, task=task, difficulty=4).task.requirements
        )


def test_every_pool_phrasing_is_precise_with_a_number_and_vague_without():
    for pool in [*TASK_POOLS.values(), CUSTOM_POOL]:
        for p in pool.must_have + pool.success:
            assert compose.is_precise(p.precise.replace("{budget}", "$100")), p.precise
            assert not compose.is_precise(p.vague), p.vague
        assert not any(map(compose.is_precise, pool.nice_to_have + pool.conflict))


def test_vagueness_can_follow_the_overall_level_instead_of_content():
    d = model.Difficulty(style=5, length=5, content=1, tone=5)
    by_content = profiles.generate_profile(3, task="Buy a smartphone", difficulty=d)
    by_level = profiles.generate_profile(3, task="Buy a smartphone", difficulty=d, vague_by="level")
    assert all(map(compose.is_precise, by_content.task.requirements))
    assert not any(map(compose.is_precise, by_level.task.requirements))


def test_example_messages_fit_the_user_limits_and_follow_the_difficulty():
    lo, hi = model.USER_LENGTH
    for seed in range(40):
        for level in (1, 5):
            ex = profiles.generate_profile(seed, difficulty=level).examples
            assert 2 <= len(ex) <= 3
            assert all(lo <= len(e) <= hi for e in ex), ex
            if level == 1:  # whole sentences: a capital first, a full stop or question mark last
                assert all(e[0].isupper() and e[-1] in ".?" for e in ex), ex
            else:  # lowercase fragments, trailing off
                assert all(e == e.lower() and e[-1] not in "." for e in ex), ex
        drawn = profiles.generate_profile(seed).examples
        assert all(lo <= len(e) <= hi for e in drawn), drawn
    precise = profiles.generate_profile(1, task="Buy a smartphone", difficulty=1).examples
    vague = profiles.generate_profile(1, task="Buy a smartphone", difficulty=5).examples
    assert sum(map(compose.is_precise, precise)) >= 2
    assert not any(map(compose.is_precise, vague))


# -- files ----------------------------------------------------------------------------------------


def test_a_profile_survives_the_toml_round_trip(tmp_path):
    for task in [*TASKS, 'Say "hi" to\nmy café'[:40]]:
        p = profiles.generate_profile(5, task=task, uncertainty=60)
        path = profiles.save_profile(p, tmp_path)
        assert path == tmp_path / f"{p.id}.toml"
        assert profiles.load_profile(path) == p
    odd = p.model_copy(
        update={
            "task": p.task.model_copy(
                update={"attributes": {**p.task.attributes, "preferred brand's name": 'A "B"'}}
            )
        }
    )
    odd = profiles.with_uncertainty(odd, 40, 5)
    assert profiles.load_profile(profiles.save_profile(odd, tmp_path)) == odd
    assert not list(tmp_path.glob("*.tmp"))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "someone.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _good(uncertainty: int = 40) -> str:
    return profiles.dump_profile(
        profiles.generate_profile(2, task="Refill my prescription", uncertainty=uncertainty)
    )


@pytest.mark.parametrize(
    ("edit", "field", "reason"),
    [
        (lambda t: t.replace("[difficulty]", "[difficulty"), "", "not valid TOML"),
        (lambda t: re.sub(r"requirements = \[[^\]]*\]", 'requirements = "soon"', t), "task.requirements", "valid list"),
        (lambda t: re.sub(r'(requirements = \[\n  "[^"]*",\n  "[^"]*",\n)  "[^"]*"', r"\g<1>  7", t), "task.requirements.2", "valid string"),
        (lambda t: re.sub(r"tone = \d", "tone = 7", t), "difficulty.tone", "less than or equal to 5"),
        (lambda t: t[: t.index("[task]")], "task", "missing"),
        (lambda t: t.replace("uncertainty = 40", "uncertainty = 50"), "uncertainty", "50 is not one of 0, 40, 60, 80"),
        (lambda t: t.replace("uncertainty = 40", "uncertainty = 60"), "unknown", "60 % of this profile's 27 attributes is 16"),
        (lambda t: t.replace("unknown = [\n", 'unknown = [\n  "base.shoe_size",\n', 1), "unknown.0", "'base.shoe_size' is not an attribute"),
        (lambda t: re.sub(r'^name = ".*"$', 'name = "Mary Ann"', t, flags=re.M), "name", "one word"),
        (lambda t: t.replace("[traits]", "[traits]\nmood = 3"), "traits.mood", "valid string"),
        (lambda t: "colour = 'blue'\n" + t, "colour", "not a field of a profile"),
    ],
    ids=["syntax", "wrong-type", "list-item", "difficulty-7", "no-task", "uncertainty-50", "count", "unknown-entry", "name", "attribute-type", "extra"],
)  # fmt: skip
def test_a_bad_file_names_the_file_and_the_field(tmp_path, edit, field, reason):
    text = edit(_good())
    assert text != _good()
    path = _write(tmp_path, text)
    with pytest.raises(errors.ProfileError) as caught:
        profiles.load_profile(path)
    exc = caught.value
    assert (exc.path, exc.field) == (str(path), field)
    assert reason in exc.reason
    assert str(exc).startswith(f"{path}: {field + ': ' if field else ''}")
    assert isinstance(exc, errors.PersonaError)


def test_a_file_that_is_not_utf8_is_named_as_a_profile_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_bytes(_good().encode("utf-16"))
    with pytest.raises(errors.ProfileError, match="profile files are UTF-8 TOML"):
        profiles.load_profile(path)
    with pytest.raises(errors.ProfileError, match="cannot be read"):
        profiles.load_profile(tmp_path / "missing.toml")


def test_saving_a_profile_that_would_not_load_keeps_the_old_file(tmp_path):
    good = profiles.generate_profile(2, task="Rent an apartment", uncertainty=40)
    path = profiles.save_profile(good, tmp_path)
    before = path.read_text(encoding="utf-8")
    broken = good.model_copy(update={"unknown": good.unknown[:-1]})  # one short of 40 %
    with pytest.raises(errors.ProfileError) as caught:
        profiles.save_profile(broken, tmp_path)
    assert (caught.value.path, caught.value.field) == (str(path), "unknown")
    assert path.read_text(encoding="utf-8") == before
    assert not list(tmp_path.glob("*.tmp"))


def test_load_profiles_reads_a_directory_and_stops_at_a_bad_file(tmp_path):
    assert profiles.load_profiles(tmp_path) == []
    made = [profiles.generate_profile(s, task="Schedule a doctor visit") for s in (3, 1, 2)]
    for p in made:
        profiles.save_profile(p, tmp_path)
    (tmp_path / "notes.txt").write_text("not a profile")
    assert [p.seed for p in profiles.load_profiles(tmp_path)] == [1, 2, 3]
    (tmp_path / "zz.toml").write_text(
        profiles.dump_profile(made[0]).replace("[task]", "[task]\nid = 1"), encoding="utf-8"
    )
    with pytest.raises(errors.ProfileError) as caught:
        profiles.load_profiles(tmp_path)
    assert caught.value.path.endswith("zz.toml")
    assert caught.value.field == "task.id"
    with pytest.raises(errors.ProfileError, match="is not a directory of profile files"):
        profiles.load_profiles(tmp_path / "nowhere")


def _looping_folder(tmp_path: Path) -> Path:
    """A profiles folder with one good profile, two links that point at each other, a link to a
    missing file, a link back to the folder named like a profile, and one named otherwise."""
    users = tmp_path / "users"
    users.mkdir()
    profiles.save_profile(profiles.generate_profile(1, task="Rent an apartment"), users)
    (users / "a.toml").symlink_to("b.toml")
    (users / "b.toml").symlink_to("a.toml")
    (users / "gone.toml").symlink_to("missing.toml")
    (users / "here.toml").symlink_to(".")
    (users / "loop").symlink_to(".")
    return users


def test_links_that_loop_or_lead_nowhere_are_named_not_skipped(tmp_path):
    users = _looping_folder(tmp_path)
    found = {path.name: item for path, item in profile_files.scan_profiles(users)}
    assert isinstance(found.pop("rent-an-apartment-s1.toml"), model.UserProfile)
    reasons = {name: str(item) for name, item in found.items()}
    assert reasons == {
        "a.toml": f"{users / 'a.toml'}: is a symbolic link that loops (a.toml → b.toml → a.toml)",
        "b.toml": f"{users / 'b.toml'}: is a symbolic link that loops (b.toml → a.toml → b.toml)",
        "gone.toml": f"{users / 'gone.toml'}: is a symbolic link to missing.toml, which does not exist",
        "here.toml": f"{users / 'here.toml'}: is a folder (a symbolic link to .), not a profile file",
    }  # fmt: skip
    with pytest.raises(errors.ProfileError, match=r"a\.toml: is a symbolic link that loops"):
        profiles.load_profiles(users)


def test_the_commands_name_a_looping_link_in_the_profiles_folder(tmp_path):
    users = _looping_folder(tmp_path)
    code, table, err = run("profiles", "list", str(users))
    assert code == 1
    assert "Traceback" not in err
    assert "a.toml: error: " in table
    assert "is a symbolic link that loops" in table
    assert "4 of 5 profile files cannot be used" in err
    line = cli_refusal(
        "storm", "--profiles-dir", str(users), "--db", str(tmp_path / "s.db"), code=2
    )
    assert line == (
        f"error: {users / 'a.toml'}: is a symbolic link that loops (a.toml → b.toml → a.toml)"
    )


def test_two_files_with_the_same_id_are_refused(tmp_path):
    p = profiles.generate_profile(3, task="Rent an apartment")
    text = 'id = "same"\n' + profiles.dump_profile(p)
    (tmp_path / "a.toml").write_text(text, encoding="utf-8")
    (tmp_path / "b.toml").write_text(text, encoding="utf-8")
    found = profile_files.scan_profiles(tmp_path)
    assert isinstance(found[0][1], model.UserProfile)
    assert isinstance(found[1][1], errors.ProfileError)
    assert found[1][1].field == "id"


def test_the_users_directory_is_not_read_as_personas():
    assert profiles.DEFAULT_DIR == REPO / "personas" / "users"
    names = {p.name for p in personas.load_personas()}
    assert names == {p.stem.capitalize() for p in (REPO / "personas").glob("*.toml")} - {
        "Icebreakers"
    }


def test_the_shipped_profiles_load_one_per_task_as_generated_with_seed_1():
    files = sorted(profiles.DEFAULT_DIR.glob("*.toml"))
    shipped = profiles.load_profiles()
    assert len(files) == len(shipped) == 15
    assert sorted(p.task.task for p in shipped) == sorted(TASKS)
    assert {p.seed for p in shipped} == {1}
    assert {p.origin for p in shipped} == {"offline pools"}
    assert {p.uncertainty for p in shipped} == set(model.UNCERTAINTIES)
    assert len({p.difficulty.level for p in shipped}) >= 3
    assert len({p.name for p in shipped}) == 15
    # exactly what `playground profiles generate --task all --seed 1 --uncertainty 0,40,60,80` writes
    made: list[model.UserProfile] = []
    for i, task in enumerate(TASKS):
        made.append(
            profiles.generate_profile(
                1,
                task=task,
                uncertainty=model.UNCERTAINTIES[i % 4],
                avoid_names=[m.name for m in made],
            )
        )
    assert {p.id: p for p in shipped} == {p.id: p for p in made}


# -- enrichment -------------------------------------------------------------------------------


def _answer(**over: object) -> str:
    base = {
        "name": "Marisol Vega",
        "description": "A retired teacher who runs out of pills on weekends; she wants it sorted.",
        "task_attributes": [
            {"name": "Preferred pharmacy", "value": "the one by the bus stop"},
            {"name": "budget", "value": "$1,000,000"},  # a drawn value: must stay
        ],
        "requirements": ["Pills before Friday", "No queue at the counter"],
        "success_criteria": ["I never run out again"],
        "examples": [
            "hi, my pills run out friday, can you sort a refill?",
            "Is delivery free, or what?",
        ],
    }
    return json.dumps({**base, **over})


def _responder(answer: str):
    def respond(body: dict) -> str | None:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        return answer if name == "ProfileOut" else None

    return respond


async def _enrich(llm_server, offline: model.UserProfile) -> tuple[model.UserProfile, list[str]]:
    """``offline`` enriched by the loopback server through the real client, and the notes."""
    client = factory.make_chat_client(server_settings(llm_server))
    notes: list[str] = []
    try:
        return await profiles.enrich_profile(offline, client, notes=notes), notes
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_enrichment_asks_with_the_task_and_difficulty_and_uses_the_answer(llm_server):
    llm_server.set_responder(_responder(_answer()))
    offline = profiles.generate_profile(
        6,
        task="Refill my prescription",
        difficulty=model.Difficulty(style=2, length=3, content=5, tone=4),
        uncertainty=60,
    )
    p, notes = await _enrich(llm_server, offline)
    (body,) = [r for r in llm_server.requests if r["_path"].endswith("/chat/completions")]
    prompt = body["messages"][-1]["content"]
    assert "Task: Refill my prescription" in prompt
    assert "style 2" in prompt
    assert "length 3" in prompt
    assert "content 5" in prompt
    assert "tone 4" in prompt
    assert "at difficulty 5: make them unclear" in prompt
    assert offline.task.attributes["budget"] in prompt
    assert offline.base["culture"] in prompt
    assert all(u in prompt for u in offline.unknown)
    assert "do not know about themselves" in prompt
    assert notes == []
    assert p.origin == "fake-model"
    assert p.name == "Marisol"
    assert p.description.startswith("A retired teacher")
    assert p.task.requirements == ["Pills before Friday", "No queue at the counter"]
    assert p.task.success_criteria == ["I never run out again"]
    assert p.examples[1] == "Is delivery free, or what?"
    assert p.task.attributes["budget"] == offline.task.attributes["budget"]  # the pools' value kept
    assert p.task.attributes["preferred_pharmacy"] == "the one by the bus stop"
    assert (p.base, p.traits, p.context, p.difficulty) == (
        offline.base,
        offline.traits,
        offline.context,
        offline.difficulty,
    )
    assert len(p.unknown) == round(0.6 * (ATTRIBUTES + 1)) == 17  # re-masked over 28 attributes
    assert profile_files.check_mask(p) is None


@pytest.mark.asyncio
async def test_a_garbled_answer_keeps_the_offline_profile_and_says_so(llm_server):
    llm_server.set_responder(lambda body: "Sure! Here's a lovely person: Marisol, 67, teacher.")
    offline = profiles.generate_profile(6, task="Refill my prescription")
    p, notes = await _enrich(llm_server, offline)
    assert p == offline
    assert p.origin == "offline pools"
    assert llm_server.chat_calls == 2  # the answer, and the one corrective retry
    assert len(notes) == 1
    assert "gave no readable profile" in notes[0]
    assert offline.id in notes[0]


@pytest.mark.asyncio
async def test_fields_the_model_gets_wrong_keep_the_offline_composition(llm_server):
    llm_server.set_responder(
        _responder(
            _answer(
                name="   ", requirements=[], examples=["too short", "x" * 150], task_attributes=[]
            )
        )
    )
    offline = profiles.generate_profile(6, task="Refill my prescription", uncertainty=40)
    p, notes = await _enrich(llm_server, offline)
    assert p.name == offline.name
    assert p.examples == offline.examples
    assert p.task.requirements == offline.task.requirements
    assert p.task.attributes == offline.task.attributes
    assert p.unknown == offline.unknown
    assert p.task.success_criteria == ["I never run out again"]
    assert p.origin == "fake-model + offline pools (name, task attributes, requirements, examples)"
    assert notes == [
        f"fake-model gave no usable name, task attributes, requirements, examples for {offline.id};"
        " kept the offline composition for them"
    ]


@pytest.mark.asyncio
async def test_the_servers_generic_answer_makes_a_valid_profile(llm_server, tmp_path):
    offline = profiles.generate_profile(11, task="Choose a phone for my mom", uncertainty=80)
    p, notes = await _enrich(llm_server, offline)
    assert p.origin.startswith("fake-model")
    assert ("+ offline pools" in p.origin) == bool(notes)
    assert profiles.load_profile(profiles.save_profile(p, tmp_path)) == p


# -- the command line -------------------------------------------------------------------------


def test_cli_generate_writes_reproducible_files_and_list_shows_them(tmp_path):
    out_dir = tmp_path / "users"
    code, out, err = run(
        "profiles", "generate", "--task", "buy a smartphone", "--n", "3", "--seed", "5",
        "--difficulty", "2", "--uncertainty", "0,80", "--out", str(out_dir), "--engine", "offline",
    )  # fmt: skip
    assert code == 0, err
    paths = [Path(line) for line in out.split()]
    assert [p.name for p in paths] == [f"buy-a-smartphone-s{s}.toml" for s in (5, 6, 7)]
    made = [profiles.load_profile(p) for p in paths]
    assert [p.uncertainty for p in made] == [0, 80, 0]
    assert made[1] == profiles.generate_profile(
        6, task="Buy a smartphone", difficulty=2, uncertainty=80, avoid_names=[made[0].name]
    )
    assert "3 profile(s) written" in err
    assert "offline pools" in err
    code, table, err = run("profiles", "list", str(out_dir))
    assert code == 0, err
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["FILE", "NAME", "TASK"]
    assert lines[1].startswith("buy-a-smartphone-s5.toml")
    assert made[0].name in lines[1]
    assert "2/2/2/2 (level 2)" in lines[1]
    assert lines[2].endswith("80 %")


def test_cli_list_shows_bad_files_with_their_error_and_fails(tmp_path):
    profiles.save_profile(profiles.generate_profile(1, task="Rent an apartment"), tmp_path)
    (tmp_path / "broken.toml").write_text(
        _good().replace("tone = ", "tone = 9 #"), encoding="utf-8"
    )
    code, table, err = run("profiles", "list", str(tmp_path))
    assert code == 1
    assert "rent-an-apartment-s1.toml" in table
    assert f"broken.toml: error: {tmp_path / 'broken.toml'}: difficulty.tone:" in table
    assert "1 of 2 profile files cannot be used" in err


@pytest.mark.parametrize(
    ("flags", "message", "code"),
    [
        (["--uncertainty", "50"], "--uncertainty: '50' is not one of 0, 40, 60, 80", 1),
        (["--difficulty", "7"], "--difficulty: 7 is out of range (1 … 5)", 2),
        (["--n", "0"], "--n: 0 is out of range (1 … 10000)", 2),
        (["--task", " "], "--task:", 1),
    ],
)
def test_cli_generate_refuses_bad_flags_by_name(tmp_path, flags, message, code):
    line = cli_refusal("profiles", "generate", "--out", str(tmp_path), *flags, code=code)
    assert line.startswith(f"error: {message}"), line
    assert not list(tmp_path.iterdir())


def test_cli_generate_enriches_with_a_model(llm_server, tmp_path):
    llm_server.set_responder(_responder(_answer()))
    code, out, err = run(
        "profiles", "generate", "--task", "Refill my prescription", "--out", str(tmp_path),
        *openai_flags(llm_server.base_url),
    )  # fmt: skip
    assert code == 0, err
    p = profiles.load_profile(out.strip())
    assert p.origin == "fake-model"
    assert p.name == "Marisol"
    assert "(fake-model)" in err
    assert "note:" not in err
