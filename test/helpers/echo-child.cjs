// A scripted peer for proxy transparency tests: records every byte it gets on
// stdin to the file named by argv[2], echoes the same bytes on stdout, writes
// a line on stderr at start. On stdin EOF it exits with ECHO_EXIT (default 0)
// or kills itself with ECHO_SELF_KILL. On SIGTERM it says so on stderr and exits 42.
const fs = require('node:fs');
const record = process.argv[2];
fs.writeFileSync(record, '');
process.stderr.write('echo-child: started \u00e9\n');
process.on('SIGTERM', () => {
  process.stderr.write('echo-child: got SIGTERM\n', () => {
    process.exitCode = 42;
    process.stdin.destroy(); // nothing else keeps the process alive: it ends with 42
  });
});
if (process.env.ECHO_READY) fs.writeFileSync(process.env.ECHO_READY, String(process.pid));
process.stdin.on('data', (chunk) => {
  fs.appendFileSync(record, chunk);
  process.stdout.write(chunk);
});
process.stdin.on('end', () => {
  const finish = () => {
    if (process.env.ECHO_SELF_KILL) process.kill(process.pid, process.env.ECHO_SELF_KILL);
    else process.exitCode = Number(process.env.ECHO_EXIT ?? 0); // stdin has ended: the process ends with it
  };
  process.stdout.write('', finish);
});
