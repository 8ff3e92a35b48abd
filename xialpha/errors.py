"""The one exception type for mistakes a user can fix (bad spec, missing file, bad input)."""


class UserError(ValueError):
    """A problem with the user's input: the CLI prints it as one line and exits with code 2.

    The message names the field, argument or file and says what is wrong with it.
    """
