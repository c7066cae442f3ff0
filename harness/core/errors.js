// A mistake the user can fix (bad input, missing prerequisite). The CLI
// prints its message as one line and exits 2; anything else is a bug and
// keeps its stack trace.
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UsageError';
  }
}
