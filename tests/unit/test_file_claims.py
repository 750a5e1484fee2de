"""The coordinator's phase rules (R59) over declared file sets."""

from agents.file_claims import (
    Claim,
    blockers,
    claim_problem,
    normalize_claim_path,
    shared_files,
)

ROOT = "/repo"


def claim(agent_id: str, phase: str, *files: str) -> Claim:
    return Claim(agent_id=agent_id, phase=phase, files=tuple(files))  # type: ignore[arg-type]


def test_paths_are_normalised_relative_to_the_workspace():
    assert normalize_claim_path(ROOT, "/repo/src/app.py") == "src/app.py"
    assert normalize_claim_path(ROOT, "./src//app.py") == "src/app.py"
    assert normalize_claim_path(ROOT, "src/../src/app.py") == "src/app.py"
    assert normalize_claim_path(ROOT, "/repo") == "."
    assert normalize_claim_path(ROOT, "/elsewhere/x.py") is None
    assert normalize_claim_path(ROOT, "/repository/x.py") is None
    assert normalize_claim_path(ROOT, "../x.py") is None
    assert normalize_claim_path(ROOT, "  ") is None


def test_writers_of_the_same_file_conflict():
    assert shared_files(claim("a", "implementation", "x.py"), claim("b", "implementation", "x.py"))
    assert not shared_files(
        claim("a", "implementation", "x.py"), claim("b", "implementation", "y.py")
    )


def test_a_directory_claim_covers_its_files():
    a, b = claim("a", "implementation", "src"), claim("b", "implementation", "src/app.py")
    assert shared_files(a, b) == ["src/app.py"]
    assert not shared_files(claim("a", "implementation", "src2"), b)
    assert shared_files(claim("a", "implementation", "."), b)


def test_research_never_conflicts_and_checks_only_wait_for_writers():
    writer = claim("w", "implementation", "x.py")
    assert not shared_files(claim("r", "research", "x.py"), writer)
    assert shared_files(claim("v", "verification", "x.py"), writer) == ["x.py"]
    assert not shared_files(claim("v", "verification", "y.py"), writer)
    assert not shared_files(
        claim("v1", "verification", "x.py"), claim("v2", "verification", "x.py")
    )


def test_blockers_name_each_conflict_and_skip_the_claim_itself():
    me = claim("me", "implementation", "a.py", "b.py")
    ahead = [me, claim("w1", "implementation", "a.py"), claim("w2", "implementation", "c.py")]
    found = blockers(me, ahead)
    assert [(c.agent_id, files) for c, files in found] == [("w1", ["a.py"])]


def test_claim_problems_are_messages_the_model_can_act_on():
    assert "must declare the files" in claim_problem("implementation", [], ROOT)
    assert claim_problem("research", [], ROOT) is None
    assert "inside the repository" in claim_problem("verification", ["/etc/passwd"], ROOT)
    assert claim_problem("implementation", ["src/app.py"], ROOT) is None
