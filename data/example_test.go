package data_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/pairfed/pairfed/data"
)

// The preparation pipeline: load, split, scale on the training part only,
// then clip every record to the radius the privacy analysis assumes.
func Example() {
	csv := "id,x1,x2,diagnosis\n" +
		"1,1.0,10,B\n2,2.0,20,B\n3,3.0,30,M\n4,4.0,40,B\n" +
		"5,5.0,50,M\n6,6.0,60,B\n7,7.0,70,M\n8,8.0,80,B\n"
	tab, err := data.Read(strings.NewReader(csv), "example.csv", data.Options{IgnoreColumns: []string{"id"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tab.N, tab.D, tab.Positive, tab.Notes)

	rng := rand.New(rand.NewPCG(1, 2))
	trainIdx, testIdx, err := data.StratifiedSplit(tab.Y, 0.25, rng)
	if err != nil {
		fmt.Println(err)
		return
	}
	train, test := tab.Subset(trainIdx), tab.Subset(testIdx)
	sc, err := data.FitScaler("minmax", train)
	if err != nil {
		fmt.Println(err)
		return
	}
	train, test = sc.Apply(train), sc.Apply(test)
	train, clipped, err := data.Clip(train, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(train.N, test.N, train.MaxNorm() <= 1, clipped > 0)
	// Output:
	// 8 2 [M] [positive class = minority class M (3 of 8)]
	// 6 2 true true
}

// Errors name the file, the line and the column (a field number for CSV).
func ExampleRead_error() {
	_, err := data.Read(strings.NewReader("1,2,0\n3,?,1\n"), "scores.csv", data.Options{})
	fmt.Println(err)
	// Output:
	// data: scores.csv:2:2: missing value in column 2 (use --impute constant:V or schema, which keep a run private, or mean|drop, which do not)
}
