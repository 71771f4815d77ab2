module github.com/progressotel/progressotel/deploy

go 1.26.8
