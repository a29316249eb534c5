"""Every environment variable the settings read is documented for operators."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV_READERS = {"env_str", "env_bool", "env_int", "env_list", "getenv", "get"}


def settings_env_names() -> set[str]:
    """Names passed as a literal to env_* readers, os.getenv or os.environ.get/[]."""
    tree = ast.parse((ROOT / "pi_dashboard" / "settings.py").read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else getattr(func, "id", "")
            )
            arg = node.args[0]
            if name in ENV_READERS and isinstance(arg, ast.Constant):
                names.add(str(arg.value))
        if (
            isinstance(node, ast.Subscript)
            and "environ" in ast.unparse(node.value)
            and isinstance(node.slice, ast.Constant)
        ):
            names.add(str(node.slice.value))
    return {n for n in names if re.fullmatch(r"[A-Z][A-Z0-9_]+", n)}


def test_the_settings_parser_finds_the_known_variables() -> None:
    names = settings_env_names()
    assert {
        "DATABASE_URL",
        "REDIS_URL",
        "DJANGO_SECRET_KEY",
        "PI_INGEST_MAX_BYTES",
    } <= names
    assert len(names) >= 25


def test_every_setting_variable_is_in_env_example() -> None:
    example = (ROOT / "docker" / ".env.example").read_text()
    listed = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, flags=re.M))
    missing = sorted(settings_env_names() - listed)
    assert not missing, f"add to docker/.env.example: {missing}"


def test_every_setting_variable_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = sorted(n for n in settings_env_names() if f"`{n}`" not in readme)
    assert not missing, f"add to README's configuration table: {missing}"
