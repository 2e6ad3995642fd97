
BlogitsJPpÌ&¿§MŠ¿¯Ùl¿âP*>EÏA¿DÜ?Aáó>˜Èk?AO]>Ô\l¿¹S×¿wð!>ÅÜ	¿'®?cIu¿Òh,¿S(?«H´>¸1)?H°À