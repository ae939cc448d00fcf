/** A progress line printer for long CLI runs: `[mm:ss] line` on stderr, timed from `began`. */
export function stampedProgress(began: number): (line: string) => void {
  return (line) => {
    const seconds = Math.floor((performance.now() - began) / 1000);
    const clock = `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
    process.stderr.write(`[${clock}] ${line}\n`);
  };
}
