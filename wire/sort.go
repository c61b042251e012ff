package wire

import (
	"cmp"
	"slices"
)

// Sort puts the largest groups first, as the reply promises.
func (l LiveObjects) Sort() {
	slices.SortFunc(l.LiveObjects, func(a, b LiveObjectGroup) int {
		return cmp.Or(
			cmp.Compare(b.InstanceSize, a.InstanceSize),
			cmp.Compare(b.Count, a.Count),
			cmp.Compare(a.Class, b.Class),
			slices.CompareFunc(a.CreatedFrom, b.CreatedFrom, compareFrames),
		)
	})
}

func compareFrames(a, b Frame) int {
	return cmp.Or(
		cmp.Compare(a.Source, b.Source),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.FunctionDisplayName, b.FunctionDisplayName),
	)
}
