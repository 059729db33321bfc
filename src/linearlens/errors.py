"""The one base class of failures whose message already says what to do (a dataset that cannot be
fetched, a damaged file, an interrupted job, a device this machine lacks). The workflow's job
wrapper prints such a message without a traceback; it imports only this module, so that editing a
reader or a device helper does not make every job's code, and rerun every job."""


class ExplainedFailure(Exception):
    """A failure whose message names the file, URL, device or command the user needs."""
