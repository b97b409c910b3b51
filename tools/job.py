"""How the jobs csv, charts, tables and compare read their arguments and report bad input: one
line on stderr and exit status 2, never a traceback."""

import argparse
import sys

from tools.schema import InputError


def run_job(name, description, function, arguments, argv):
    """Calls function with the named positional arguments read from argv; 0, or 2 on bad input."""
    parser = argparse.ArgumentParser(prog=f"python3 -m tools {name}", description=description)
    for argument in arguments:
        parser.add_argument(argument)
    args = vars(parser.parse_args(argv))
    try:
        function(**args)
    except InputError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # an output file that cannot be written
        print(f"{name}: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    return 0
