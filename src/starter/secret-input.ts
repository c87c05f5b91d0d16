/**
 * Reading a secret (a card's PIN) from the operator: from a terminal without echo, asked twice when
 * told to confirm; from a pipe, its first line. Never from a flag (shell history, the process list)
 * and never written anywhere: the prompt goes to stderr, the secret only to the caller.
 */
import { UsageError } from './args';

export async function readSecretFromStdin(prompt: string, opts: { confirm?: boolean } = {}): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return firstLine(stdin);
  const first = await readHidden(prompt);
  if (opts.confirm && (await readHidden('again: ')) !== first) throw new UsageError('the two entries differ: nothing was done');
  return first;
}

/** The first line of a stream (without its line ending), or all of it when it ends first. */
function firstLine(stream: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (line: string) => {
      stream.off('data', onData).off('end', onEnd).off('error', reject);
      stream.pause();
      resolve(line.replace(/\r$/, ''));
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end >= 0) done(text.slice(0, end));
    };
    const onEnd = () => done(text);
    stream.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/** One line typed at the terminal, not echoed (raw mode): Enter ends it, Backspace erases, Ctrl-C or Ctrl-D gives up. */
function readHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (outcome: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      outcome();
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return finish(() => resolve(typed));
        if (ch === '\u0003' || ch === '\u0004') return finish(() => reject(new UsageError('no secret given: nothing was done')));
        typed = ch === '\u007f' || ch === '\b' ? typed.slice(0, -1) : typed + ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}
