"""A SIGKILLed worker's Bash scratch directory is removed by the retry or the reaper, by its
run's record: only a directory named as Outlast names them, and only on the host that ran it."""

import json

from activities.tools import bash_runs


def record(tmp_path, scratch, space=None):
    path = tmp_path / "run.json"
    fields = {"pgid": 1, "scratch": str(scratch), "space": space or bash_runs._pid_space()}
    path.write_text(json.dumps(fields))
    return path


def test_the_recorded_scratch_directory_is_removed_with_what_it_holds(tmp_path):
    scratch = tmp_path / "outlast-bash-abc"
    (scratch / "deep").mkdir(parents=True)
    (scratch / "output").write_text("a lot of output")
    bash_runs.remove_scratch(record(tmp_path, scratch))
    assert not scratch.exists()


def test_a_directory_not_named_as_outlast_names_them_is_left(tmp_path):
    other = tmp_path / "home"
    other.mkdir()
    bash_runs.remove_scratch(record(tmp_path, other))
    assert other.exists()


def test_another_host_s_record_is_left_alone(tmp_path):
    scratch = tmp_path / "outlast-bash-abc"
    scratch.mkdir()
    bash_runs.remove_scratch(record(tmp_path, scratch, space="another-boot:1"))
    assert scratch.exists()


def test_a_record_of_an_earlier_release_names_none(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"pgid": 1, "space": bash_runs._pid_space()}))
    bash_runs.remove_scratch(path)  # nothing to remove, nothing raised
    bash_runs.remove_scratch(tmp_path / "missing.json")
