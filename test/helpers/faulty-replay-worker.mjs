/**
 * A replay worker (the built `dist/replay/` modules) that fails on purpose,
 * for `test/replay/transcript-pool.e2e.test.ts`: a session with a file whose path
 * holds `CRASH` throws out of the worker (an uncaught error ends the
 * thread), `EXIT` ends the thread with code 3, `THROW` makes the Claude Code
 * reader itself throw (contained by the session job). Every other session is
 * read as the real worker reads it.
 */
import { parentPort } from 'node:worker_threads';
import { readSessionJob } from '../../dist/replay/session-job.js';
import { claudeCodeFormat } from '../../dist/transcripts/claude-code/files.js';

const read = claudeCodeFormat.read.bind(claudeCodeFormat);
claudeCodeFormat.read = (session, context) => {
  if (session.files.some((file) => file.path.includes('THROW'))) throw new Error('the reader broke on purpose');
  return read(session, context);
};

const port = parentPort;
let queue = Promise.resolve();
// One session at a time, as the real worker: the one that fails is the one being read.
port.on('message', (request) => {
  queue = queue.then(async () => {
    const paths = request.session.files.map((file) => file.path).join(' ');
    if (paths.includes('CRASH')) throw new Error('the worker crashed on purpose');
    if (paths.includes('EXIT')) process.exit(3);
    port.postMessage(await readSessionJob(request));
  });
});
port.postMessage({ ready: true });
