import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { helpText } from '../../src/cli/command.ts'
import { commands } from '../../src/cli/commands.ts'

describe('sitegrid COMMAND --help', () => {
  it('describes every option of every command, with the form of its value', () => {
    const undescribed: string[] = []
    for (const command of commands) {
      const help = helpText(command)
      for (const [name, option] of Object.entries(command.options)) {
        const where = `sitegrid ${command.path.join(' ')} --${name}`
        if (option.description.trim().length < 5) undescribed.push(where)
        const line = help.split('\n').find((l) => l.trimStart().startsWith(`--${name} `) || l.trim() === `--${name}`)
        assert.ok(line?.includes(option.description), `${where}: its help line shows its description`)
        if (option.type === 'string') assert.match(line!, new RegExp(`--${name} [A-Za-z_]+ `), `${where}: the help names the form of its value`)
      }
    }
    assert.deepEqual(undescribed, [], 'options without a description')
    assert.ok(commands.length >= 39, `every command is walked (${commands.length})`)
  })

  it('shows the value of --expires-in as a duration with examples', () => {
    const mint = commands.find((c) => c.path.join(' ') === 'key mint')!
    assert.match(helpText(mint), /--expires-in DURATION +lifetime: a number and m, h, d or w \(90m, 12h, 30d, 2w\)/)
  })
})
