"""The envelope's sentences and table, as parity.report.envelope_text writes them (the report renders them too)."""

from parity.report.envelope_text import CHECKED, HEADERS, cells, members, said, sentence, shown, table

__all__ = ["CHECKED", "HEADERS", "cells", "members", "said", "sentence", "shown", "table"]
