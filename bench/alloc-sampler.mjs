// Loaded into a server by bench/alloc-profile.ts (node --import): V8's sampling heap profiler, run
// in the process itself through node:inspector (no debugger port). SIGUSR2 starts it; the next
// SIGUSR2 stops it and writes the profile, as JSON, to ALLOC_OUT. Objects the collector has taken
// since are kept in the profile: it says what was allocated, not what is still alive.
import fs from 'node:fs';
import inspector from 'node:inspector';

const session = new inspector.Session();
session.connect();
let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.enable', () =>
      session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }),
    );
    return;
  }
  sampling = false;
  session.post('HeapProfiler.stopSampling', (err, result) => {
    // Written aside and renamed: the bench waits for the file and must not read half of it.
    fs.writeFileSync(`${process.env.ALLOC_OUT}.part`, JSON.stringify(err ? { error: String(err) } : result.profile));
    fs.renameSync(`${process.env.ALLOC_OUT}.part`, process.env.ALLOC_OUT);
  });
});
