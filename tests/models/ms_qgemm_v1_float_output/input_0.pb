BaJcÊ¬û7çe¯WƒteçaN
"$ÒówÔý