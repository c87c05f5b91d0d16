/** The CLI's help (docs/cli.md): every command listed, one command's flags with `--help COMMAND`; no configuration read. */
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

describe('CLI help', () => {
  test('--help lists every command; --help COMMAND gives that command its flags; an unknown one is bad input', async () => {
    const all = await help('--help');
    expect(all.code).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(all.stderr).toContain(`  ${COMMANDS[name].usage.split(' ')[0]}`);
    const reveal = await help('--help', 'reveal');
    expect(reveal).toEqual({ code: 0, stdout: '', stderr: 'usage: npm run starter -- reveal ID [--json --show-number] [--json]\n' });
    expect((await help('help', 'issue-card')).stderr).toMatch(/^usage: npm run starter -- issue-card --bin ID --amount CENTS .* \[--no-wait\] \[--json\]\n$/);
    const unknown = await help('--help', 'nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "nope"/);
  });

  test('docs/cli.md names every command', () => {
    const section = readFileSync(join(__dirname, '../../docs/cli.md'), 'utf8');
    const missing = Object.keys(COMMANDS).filter((name) => !new RegExp(`\`${name}[\\s\`]`).test(section));
    expect(missing).toEqual([]);
  });
});
