"""Records: the dicts kforge returns (fingerprints, rows, tuning summaries),
readable as attributes too (``summary.winner.config``)."""


class Record(dict):
    """A dict whose keys are also attributes; nested dicts are Records."""

    def __init__(self, data=(), **kwargs):
        super().__init__(data, **kwargs)
        for key, value in self.items():
            super().__setitem__(key, wrap(value))

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"record has no field {name!r} (fields: {', '.join(self)})") from None


def wrap(value):
    """Dicts become Records, recursively through lists."""
    if isinstance(value, dict) and not isinstance(value, Record):
        return Record(value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value
