import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import cacheUseGatherer, { cacheUse, responsesOf } from '../../harness/pageload/gather/cache-use.js';

const received = (requestId, url, status, extra = {}) => ({
  method: 'Network.responseReceived',
  params: { requestId, response: { url, status, fromDiskCache: false, ...extra } },
});
const raw = (requestId, statusCode) => ({
  method: 'Network.responseReceivedExtraInfo',
  params: { requestId, statusCode },
});
const servedFromCache = (requestId) => ({ method: 'Network.requestServedFromCache', params: { requestId } });

describe('cache use of a load (gather/cache-use.js)', () => {
  it('counts responses from the cache, revalidated (304 on the wire) and fetched whole', () => {
    const events = [
      raw('1', 200),
      received('1', 'https://satbench.test/', 200),
      // revalidated: the page sees the cached 200, the wire a 304 (its extra info may come later)
      received('2', 'https://satbench.test/a.css', 200),
      raw('2', 304),
      // a 304 as responseReceived reports it, without extra info
      received('3', 'https://satbench.test/b.js', 304),
      received('4', 'https://satbench.test/c.jpg', 200, { fromDiskCache: true }),
      servedFromCache('5'),
      received('5', 'https://satbench.test/d.png', 200),
      received('6', 'https://satbench.test/e.png', 200, { fromPrefetchCache: true }),
      received('7', 'data:image/gif;base64,R0lG', 200),
      received('8', 'https://satbench.test/gone.js', 0),
      raw('9', 404),
      received('9', 'https://satbench.test/missing.js', 404),
    ];
    assert.deepEqual(cacheUse(responsesOf(events)), { from_cache: 3, revalidated: 2, fetched: 2 });
    assert.deepEqual(cacheUse([]), { from_cache: 0, revalidated: 0, fetched: 0 });
  });

  it('a request with no response is not counted', () => {
    assert.deepEqual(responsesOf([raw('1', 304)]), []);
  });

  it('the gatherer counts what DevTools sent during its load', async () => {
    const cdp = new EventEmitter();
    const g = cacheUseGatherer();
    assert.equal(g.key, 'cache_use');
    g.start({ cdp });
    for (const { method, params } of [
      received('1', 'https://s.test/', 200),
      raw('2', 304),
      received('2', 'https://s.test/x', 200),
    ])
      cdp.emit(method, params);
    assert.deepEqual(await g.stop({}), { from_cache: 0, revalidated: 1, fetched: 1 });
  });
});
