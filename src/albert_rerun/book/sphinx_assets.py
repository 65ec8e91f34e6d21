"""A Sphinx extension that gives each page every script once: sphinx-thebe's inline script
is held twice under Sphinx 7.4 (file name None and ''), a console error on every page."""
from __future__ import annotations


def unique_scripts(app, pagename, templatename, context, doctree) -> None:
    """Drop the repeats of a script (same file and attributes), keeping the first."""
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
