// A mistake the user can fix (bad input, missing prerequisite). The CLI
// prints its message as one line and exits 2; anything else is a bug and
// keeps its stack trace.
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UsageError';
  }
}

// Runs `check`; a UsageError it throws gets `flag` in front, so that the
// user learns which option fed the value (a profile file's own message
// names the file, not --profile).
/** Pure: how option `key` of a parseArgs table is typed on the command line (-n, --out). */
export const optionFlag = (key, option) => (option?.short ? `-${option.short}` : `--${key}`);

export function withFlag(flag, check) {
  try {
    return check();
  } catch (e) {
    if (e instanceof UsageError && !e.message.startsWith(`${flag}`)) throw new UsageError(`${flag}: ${e.message}`);
    throw e;
  }
}
