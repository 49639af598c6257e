package migrations

// Direction says which way a change runs: [DirectionUp] applies it,
// [DirectionDown] reverts it.
type Direction string

// The two directions.
const (
	DirectionUp   Direction = "up"
	DirectionDown Direction = "down"
)
