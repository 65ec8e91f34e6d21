"""A Sphinx extension (``_config.yml``: ``sphinx.extra_extensions``) that gives each
page every script once.

sphinx-thebe adds an inline script (``const THEBE_JS_URL = ...``) after the HTML builder
exists; Sphinx 7.4 then holds it twice, once with the file name ``None`` and once with
``''``, so its de-duplication keeps both, and the second copy is a console error on
every page ("Identifier 'THEBE_JS_URL' has already been declared")."""
from __future__ import annotations


def unique_scripts(app, pagename, templatename, context, doctree) -> None:
    """Drop the repeats of a script (same file, inline body and attributes; no file
    name is no file name, None or ''), keeping the first."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = (script.filename or "", tuple(sorted(script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique  # in place: the builder's list, which later handlers extend


def setup(app):
    app.connect("html-page-context", unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
