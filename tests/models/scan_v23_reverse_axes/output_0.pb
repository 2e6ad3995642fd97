Bs_finalJàM?Ù_¿×?
@