"""README's Python snippet runs as shown, after the install line it names."""
import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_readme_snippet_runs_with_the_extra_its_install_line_names():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    install = re.search(r"`pip install '\./python\[(\w+)\]'`", section)
    assert install, "README's Python section names no install line with an extra"
    extras = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text(encoding="utf-8"))
    extra = extras["project"]["optional-dependencies"][install.group(1)]
    assert any(requirement.startswith("cassandra-driver") for requirement in extra)
    snippet = section.split("```python\n", 1)[1].split("```", 1)[0]
    import cqlwire.driver

    try:
        exec(compile(snippet, "README.md", "exec"), {})
        assert cqlwire.driver.installed()
    finally:
        cqlwire.driver.uninstall()
