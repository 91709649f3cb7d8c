"""Writing a generated table into a document between two HTML-comment markers."""
import sys


def replace_between_markers(path, name, text, tool):
    """Replaces what stands between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in the
    file at `path` by `text`; exits naming `tool` and the file if a marker is missing."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    doc = open(path).read()
    if begin not in doc or end not in doc:
        sys.exit(f"{tool}: {path} has no {begin} ... {end} markers")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(path, "w").write(head + begin + "\n" + text + end + tail)
