import { type Static, Type } from 'typebox'

export const ReloadConfigBody = Type.Union([
  Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500, description: 'Kept in the audit record.' })) }, { additionalProperties: false }),
  Type.Null(),
])

const SettingValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])

export const ReloadResultSchema = Type.Object(
  {
    reloadedAt: Type.String({ format: 'date-time' }),
    changed: Type.Array(
      Type.Object(
        {
          setting: Type.String({ description: "The setting's name, e.g. `SITEGRID_RATE_LIMIT_PER_MINUTE`." }),
          from: SettingValue,
          to: SettingValue,
        },
        { additionalProperties: false },
      ),
      { description: 'Reloadable settings whose new value is now in force (empty: nothing changed).' },
    ),
    requiresRestart: Type.Array(Type.String(), {
      description:
        'Settings whose value in the file or environment differs from the running one but that take effect only at the next ' +
        'start; the running value stays in force.',
    }),
  },
  { $id: 'ConfigReloadResult', additionalProperties: false },
)
export type ReloadResult = Static<typeof ReloadResultSchema>
