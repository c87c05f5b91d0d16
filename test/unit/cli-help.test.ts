/**
 * The CLI's help (docs/cli.md): asked for, it goes to stdout and exits 0; every command listed with
 * its one-line description; `<command> --help` (or `--help COMMAND`) gives its usage, description
 * and an example whose flags parse; an unknown command is bad input, one line on stderr. No
 * configuration read, no server.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../src/starter/run';
import { COMMANDS } from '../../src/starter/commands';

async function help(...argv: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  let stderr = '';
  let stdout = '';
  const code = await runCli(argv, () => { throw new Error('help reads no configuration'); }, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stderr, stdout };
}

/** A command line's words as a shell splits them: double quotes keep a phrase in one word. */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

describe('CLI help', () => {
  test('--help, -h and help list every command with its description, on stdout, exit 0', async () => {
    const all = await help('--help');
    expect(all).toMatchObject({ code: 0, stderr: '' });
    expect(all.stdout).toMatch(/^usage: npm run starter -- <command> \[flags\] \[--json\]\n {7}npm run starter -- <command> --help/);
    for (const [name, command] of Object.entries(COMMANDS)) expect(all.stdout).toMatch(new RegExp(`\\n  ${name} +${command.description.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
    expect(all.stdout).toContain('130 interrupted while waiting');
    expect(await help('-h')).toEqual(all);
    expect(await help('help')).toEqual(all);
  });

  test("<command> --help gives the command's usage, description and example on stdout, exit 0", async () => {
    const reveal = await help('reveal', '--help');
    expect(reveal).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'usage: npm run starter -- reveal ID [--json --show-number] [--json]',
        '',
        "Show a card's full number, CVV and expiry, to a terminal only (to a pipe or file only with --json --show-number).",
        '',
        'example: npm run starter -- reveal $CARD_ID',
        '',
      ].join('\n'),
    });
    expect(await help('reveal', '-h')).toEqual(reveal);
    expect(await help('--help', 'reveal')).toEqual(reveal);
    expect(await help('help', 'reveal')).toEqual(reveal);
    expect((await help('help', 'issue-card')).stdout).toMatch(/^usage: npm run starter -- issue-card --bin ID --amount CENTS .* \[--key K\] \[--no-wait\] \[--json\]\n\n.+\n\nexample: npm run starter -- issue-card --bin /);
    // A usage's note in parentheses stays last, after the flags every command takes.
    expect((await help('contact', '--help')).stdout.split('\n')[0]).toBe('usage: npm run starter -- contact ID [--email E|-|@FILE] [--mobile-prefix +P] [--mobile N|-|@FILE] [--json]   (personal data: - reads stdin, @FILE a file)');
  });

  test('every command has a one-line description and an example of itself whose flags and arguments parse', async () => {
    for (const [name, command] of Object.entries(COMMANDS)) {
      expect({ name, description: command.description }).toEqual({ name, description: expect.stringMatching(/^[A-Z][^\n]{10,160}\.$/) });
      const example = words(command.example);
      expect({ name, first: example[0] }).toEqual({ name, first: name });
      // --help answers only once the line parses (strict: no unknown flag, a value for each flag that takes one, not too many arguments).
      const asked = await help(...example, '--help');
      expect({ name, ...asked }).toEqual({ name, code: 0, stderr: '', stdout: (await help('--help', name)).stdout });
      expect(asked.stdout).toContain(`\nexample: npm run starter -- ${command.example}\n`);
    }
  });

  test('an unknown command is bad input: exit 2, one line on stderr, nothing on stdout', async () => {
    for (const argv of [['--help', 'nope'], ['help', 'nope'], ['nope', '--help'], ['nope']]) {
      const unknown = await help(...argv);
      expect({ argv, ...unknown }).toEqual({ argv, code: 2, stdout: '', stderr: expect.stringMatching(/^starter: unknown command "nope" \(commands: bins, issue-card, [^\n]+\)\n$/) });
    }
    // No command at all: the list, on stderr, as bad input.
    const none = await help();
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toMatch(/^usage: npm run starter -- <command>/);
  });

  test('a flag the command does not take fails even with --help: exit 2', async () => {
    const wrong = await help('fund', '--nope', '--help');
    expect(wrong).toEqual({ code: 2, stdout: '', stderr: 'starter fund: unknown flag --nope\n' });
  });

  test('docs/cli.md names every command', () => {
    const section = readFileSync(join(__dirname, '../../docs/cli.md'), 'utf8');
    const missing = Object.keys(COMMANDS).filter((name) => !new RegExp(`\`${name}[\\s\`]`).test(section));
    expect(missing).toEqual([]);
  });
});
