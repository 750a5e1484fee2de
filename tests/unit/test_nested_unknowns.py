"""workflows/nested_unknowns.py: unknown fields inside an input's strict models, by path."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from workflows.nested_unknowns import strip_unknown


class Leaf(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    size: int = 0
    active_form: str = Field(default="", alias="activeForm")


class Lenient(BaseModel):
    size: int = 0
    inner: list[Leaf] | None = None


class Tree(BaseModel):
    model_config = ConfigDict(extra="forbid")

    leaf: Leaf = Leaf()
    maybe: Leaf | None = None
    leaves: list[Leaf] = Field(default_factory=list)
    by_name: dict[str, list[Leaf]] = Field(default_factory=dict)
    lenient: Lenient = Lenient()
    either: Leaf | Lenient | None = None


def strip(data: dict) -> tuple[dict, list[str]]:
    found: list[str] = []
    return strip_unknown(Tree, data, "t", found), found


def test_each_unknown_is_named_by_its_path_with_a_guess_and_taken_out():
    data = {
        "leaf": {"sise": 1, "size": 2},
        "maybe": {"activeForm": "x", "colour": "red"},
        "leaves": [{"size": 1}, {"szie": 3}],
        "by_name": {"a": [{"size": 1, "active_from": "y"}]},
        "lenient": {"whatever": 1, "inner": [{"sise": 2}]},
        "either": {"sise": 1},
        "nope": 1,
    }
    out, found = strip(data)
    assert found == [
        "t.leaf.sise (did you mean size?)",
        "t.maybe.colour",
        "t.leaves[1].szie (did you mean size?)",
        "t.by_name.a[0].active_from (did you mean active_form?)",
        "t.lenient.whatever",
        "t.lenient.inner[0].sise (did you mean size?)",
        "t.nope",
    ]
    assert out["leaf"] == {"size": 2} and out["maybe"] == {"activeForm": "x"}
    assert out["leaves"] == [{"size": 1}, {}] and out["by_name"] == {"a": [{"size": 1}]}
    # A union of shapes is left to pydantic.
    assert out["lenient"] == {"inner": [{}]} and out["either"] == {"sise": 1}
    Tree.model_validate({k: v for k, v in out.items() if k != "either"})


def test_a_lenient_model_s_unknowns_go_apart_when_asked():
    """A client's start is refused for them; Outlast's own input goes on without them."""
    found: list[str] = []
    dropped: list[str] = []
    data = {"lenient": {"sise": 1, "inner": [{"sise": 2}]}}
    out = strip_unknown(Tree, data, "t", found, dropped)
    assert found == ["t.lenient.inner[0].sise (did you mean size?)"]
    assert dropped == ["t.lenient.sise (did you mean size?)"]
    assert out == {"lenient": {"inner": [{}]}}


def test_an_unknown_left_at_an_empty_value_is_dropped_unnamed_unless_it_looks_like_a_typo():
    out, found = strip({"leaf": {"new": None, "newer": False, "newest": [], "size": 1}})
    assert found == [] and out == {"leaf": {"size": 1}}
    # `"local_tool": false` would have left `local_tools` on without a word.
    out, found = strip({"leaf": {"active_forms": "", "sizes": False}})
    assert found == [
        "t.leaf.active_forms (did you mean active_form?)",
        "t.leaf.sizes (did you mean size?)",
    ]


def test_what_is_not_a_dict_where_a_model_goes_is_left_to_pydantic():
    out, found = strip({"leaf": 3, "leaves": "x"})
    assert found == [] and out == {"leaf": 3, "leaves": "x"}
