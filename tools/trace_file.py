"""Reading the Chrome trace files apiary writes (save_chrome_trace, Config::trace, --trace FILE):
the checks every trace tool makes before it looks at events (tools/apiary_plot.py,
tools/trace_gaps.py)."""

import json


class TraceError(Exception):
    """A trace file that cannot be read; the message names the file and the problem."""


def read_trace_file(path):
    """The trace's otherData object and its traceEvents list; raises TraceError on a file that
    is missing, not JSON, or not an apiary trace."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise TraceError(f"{path}: cannot read the file ({e.strerror})") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TraceError(f"{path}: not JSON ({e})") from e
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise TraceError(f"{path}: /traceEvents: expected an array (not a Chrome trace)")
    other = doc.get("otherData")
    if not isinstance(other, dict) or other.get("format") != "apiary-trace":
        raise TraceError(f"{path}: /otherData/format: not an apiary trace")
    return other, events
