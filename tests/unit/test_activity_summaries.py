from agents.activity_summaries import ARG_WIDTH, model_summary, short_arg, tool_summary


def test_tool_summary_names_agent_turn_tool_and_argument():
    assert tool_summary("Explore", 3, "Read", {"file_path": "/w/src/app.py"}, "/w") == (
        "Explore: turn 3: Read src/app.py"
    )
    assert tool_summary("fix", 1, "Grep", {"pattern": "def mean", "path": "/w"}) == (
        "fix: turn 1: Grep def mean"
    )
    assert model_summary("coordinator", 2, "claude-x") == "coordinator: turn 2: model claude-x"


def test_short_arg_is_one_short_line_and_keeps_outside_paths_whole():
    long = "echo " + "x" * 200 + "\nrm -rf build"
    arg = short_arg({"command": long})
    assert "\n" not in arg and len(arg) == ARG_WIDTH and arg.endswith("…")
    # A sibling directory sharing the root's prefix is not inside the root.
    assert short_arg({"file_path": "/work2/a.py"}, "/work") == "/work2/a.py"
    assert short_arg({"todos": []}) == ""
