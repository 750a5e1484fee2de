"""A scripted, Anthropic-compatible model server for testing agents without a real model.

`ScriptedModelServer` speaks the Messages API (JSON and SSE) and answers each request from
a `Script` (see SCRIPT_FORMAT.md); `load_script` reads one from YAML or JSON.
"""

from outlast.scripted_model.script import Script, ScriptError, load_script
from outlast.scripted_model.server import ScriptedModelServer

__all__ = ["Script", "ScriptError", "ScriptedModelServer", "load_script"]
