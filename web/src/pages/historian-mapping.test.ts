import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Instance } from '../api-types.ts'
import { mappingCsv, propose, reasonKind, type MappingRow } from './historian-mapping.ts'

const instance = (id: string, tagMappings: Record<string, string> = {}): Instance => ({
  id,
  siteId: 'S1',
  name: id,
  typeId: 'pump',
  typeVersion: null,
  assetNumber: `A-${id}`,
  controllerId: 'ctl_1',
  area: null,
  tagMappings,
  config: {},
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
})

const INSTANCES = [
  instance('CV-101', { running: 'Program:Main.CV101.Run', speed: 'Program:Main.CV101.Speed' }),
  instance('U204', { flow_sp: 'FC103_SP' }),
  instance('P-7', { discharge_pressure: 'PT7' }),
]

test('the mapping editor proposes by controller address, then tag key, then instance id at the start of the tag, else nothing', () => {
  assert.deepEqual(
    [
      'Program:Main.CV101.Run', // 1: an address, exactly
      'PLC1/program:main.cv101.speed', // 1: an address ending the tag after a separator, any case
      'Discharge_Pressure', // 2: a tag key
      'U204.FC103_OP.F_CV', // 3: the id starts the tag; the rest is the key
      'cv101.Running', // 3: the id loosely (CV-101), the instance's own key when it matches loosely
      'XPT7', // no separator before the address: not rule 1
      'U2045.FLOW', // not the id: nothing
    ].map((tag) => propose(tag, INSTANCES)),
    [
      { instanceId: 'CV-101', tagKey: 'running', why: 'controller address of CV-101 · running' },
      { instanceId: 'CV-101', tagKey: 'speed', why: 'controller address of CV-101 · speed' },
      { instanceId: 'P-7', tagKey: 'discharge_pressure', why: 'tag key of P-7' },
      { instanceId: 'U204', tagKey: 'FC103_OP.F_CV', why: 'starts with the id of U204' },
      { instanceId: 'CV-101', tagKey: 'running', why: 'starts with the id of CV-101' },
      { instanceId: null, tagKey: 'XPT7', why: 'no match: choose an instance' },
      { instanceId: null, tagKey: 'U2045.FLOW', why: 'no match: choose an instance' },
    ],
  )
})

test('the mapping sent holds the rows with an instance, quoted where CSV needs it; reasons group without their particulars', () => {
  const row = (historianTag: string, instanceId: string | null, tagKey: string, unit: string | null = null, scale = 1): MappingRow => ({
    historianTag,
    count: 1,
    instanceId,
    tagKey,
    unit,
    scale,
    why: '',
  })
  assert.equal(
    mappingCsv([row('VAVCO 2-03.Setpoint, Offset', 'P-7', 'offset', '°C', 0.1), row('left out', null, 'x'), row('U204.X', 'U204', 'say "hi"')]),
    'historian_tag,instance_id,tag_key,unit,scale\r\n"VAVCO 2-03.Setpoint, Offset",P-7,offset,°C,0.1\r\nU204.X,U204,"say ""hi""",,1\r\n',
  )
  assert.equal(reasonKind("historian tag 'A.B' is not in mapping_csv"), reasonKind("historian tag 'C' is not in mapping_csv"))
  assert.notEqual(reasonKind("value 'x' is not a number"), reasonKind("historian tag 'x' is not in mapping_csv"))
})
