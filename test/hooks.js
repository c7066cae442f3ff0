// Mocha's root hooks (.mocharc.json "require"): after every test, whatever
// happened in it, what the integration helpers started and the test left
// going (a satbench process, a watcher's timer) is stopped.
import { stopStarted } from './integration/helpers.js';

export const mochaHooks = { afterEach: stopStarted };
