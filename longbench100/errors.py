"""The one exception type that the command line turns into a one-line error message."""


class UserError(Exception):
    """A problem with the user's input or environment, reported as one line without a traceback."""


class HubUnreachable(UserError):
    """The Hugging Face hub could not be reached; no later download will succeed either."""


class SourceAbsent(UserError):
    """A registered source's file (or zip member, repository or revision) does not exist where it is read from."""
